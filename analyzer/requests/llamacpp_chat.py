"""The chat-completions body llama.cpp's server renders for an Anthropic Messages or Responses request.

llama-server does not render `/v1/messages` or `/v1/responses` bodies itself: it converts each to a chat
completions body first and renders that with the chat template. `to_chat_body` reproduces the two converters of
the vendored server in llama-cpp-python 0.3.36, statement by statement, so that `/apply-template` (which takes
a chat body) renders a converted body the way the server rendered the original:

- `vendor/llama.cpp/tools/server/server-chat.cpp` `server_chat_convert_anthropic_to_oai` (with
  `normalize_anthropic_billing_header`), called by `post_anthropic_messages` in `server-context.cpp`;
- `vendor/llama.cpp/tools/server/server-chat.cpp` `server_chat_convert_responses_to_chatcmpl`, called by
  `post_responses_oai`.

Details that change the rendered text are kept: the server's JSON keeps keys in insertion order
(`common/json.h`), so dicts here are built in the same order; system text blocks are concatenated with no
separator; `tool_use.input` is dumped compactly (`dump()`: no spaces, UTF-8 kept — Python's
`separators=(",", ":")`, `ensure_ascii=False`; float formatting of unusual numbers may differ); a Responses
function tool gets `"strict": true` when it has none. What the server refuses is refused here with the server's
own message (`ConversionError`). A chat body is returned unchanged.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from analyzer.errors import AnalyzerError
from analyzer.requests.model import Shape

LLAMA_CPP_PYTHON = "0.3.36"
BILLING_HEADER = "x-anthropic-billing-header:"
CCH_LENGTH = 5


class ConversionError(AnalyzerError):
    """The body is one llama.cpp's server would refuse; the message is the server's own."""


def to_chat_body(request_body: dict[str, Any], shape: Shape) -> dict[str, Any]:
    """The chat-completions body the server converts `request_body` (of `shape`) into before rendering."""
    if shape == "anthropic":
        return anthropic_to_chat(request_body)
    if shape == "responses":
        return responses_to_chat(request_body)
    return copy.deepcopy(request_body)


def _value(body: Any, key: str, default: Any, kind: type | tuple[type, ...] | None = None) -> Any:
    """The server's `json_value`: the field when present, not null and of the wanted type, else the default."""
    if not isinstance(body, dict) or key not in body or body[key] is None:
        return default
    value = body[key]
    if kind is not None and (not isinstance(value, kind) or isinstance(value, bool) and bool not in _kinds(kind)):
        return default
    return value


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# -- Anthropic Messages ------------------------------------------------------------------------------------------

def normalize_billing_header(text: str) -> str:
    """`normalize_anthropic_billing_header`: the 5-character `cch=` stamp of a Claude Code billing header line
    (it changes on every request) becomes `fffff`, so the prefix cache can get past it."""
    if not text.startswith(BILLING_HEADER):
        return text
    at = text.find("cch=", len(BILLING_HEADER))
    if at < 0:
        return text
    start = at + 4
    if start + CCH_LENGTH < len(text) and text[start + CCH_LENGTH] == ";":
        return text[:start] + "f" * CCH_LENGTH + text[start + CCH_LENGTH:]
    return text


def anthropic_to_chat(body: dict[str, Any]) -> dict[str, Any]:
    """`server_chat_convert_anthropic_to_oai`."""
    out: dict[str, Any] = {}
    messages: list[Any] = []
    system = _value(body, "system", None)
    if system is not None:
        content = ""
        if isinstance(system, str):
            content = normalize_billing_header(system)
        elif isinstance(system, list):
            for block in system:
                if _value(block, "type", "", str) == "text":
                    content += normalize_billing_header(_value(block, "text", "", str))
        messages.append({"role": "system", "content": content})
    if "messages" not in body:
        raise ConversionError("'messages' is required")
    raw = body["messages"]
    if isinstance(raw, list):
        for msg in raw:
            messages.extend(_anthropic_message(msg))
    out["messages"] = messages
    tools = body.get("tools")
    if "tools" in body and isinstance(tools, list):
        out["tools"] = [{"type": "function", "function": {
            "name": _value(t, "name", "", str), "description": _value(t, "description", "", str),
            "parameters": copy.deepcopy(t["input_schema"]) if isinstance(t, dict) and "input_schema" in t else {}}}
            for t in tools]
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        kind = _value(choice, "type", "", str)
        if kind == "auto":
            out["tool_choice"] = "auto"
        elif kind in ("any", "tool"):
            out["tool_choice"] = "required"
    if "stop_sequences" in body:
        out["stop"] = copy.deepcopy(body["stop_sequences"])
    out["max_tokens"] = copy.deepcopy(body["max_tokens"]) if "max_tokens" in body else 4096
    for key in ("temperature", "top_p", "top_k", "stream", "chat_template_kwargs"):
        if key in body:
            out[key] = copy.deepcopy(body[key])
    thinking = _value(body, "thinking", {}, dict) if "thinking" in body else None
    if thinking is not None and _value(thinking, "type", "", str) == "enabled":
        out["thinking_budget_tokens"] = _value(thinking, "budget_tokens", 10000, int)
    if "metadata" in body:
        user_id = _value(_value(body, "metadata", {}, dict), "user_id", "", str)
        if user_id:
            out["__metadata_user_id"] = user_id
    return out


def _anthropic_message(msg: Any) -> list[Any]:
    role = _value(msg, "role", "", str)
    if not isinstance(msg, dict) or "content" not in msg:
        return [] if role == "assistant" else [copy.deepcopy(msg)]
    content = msg["content"]
    if not isinstance(content, list):  # a string (or anything else) is passed on as it is
        return [copy.deepcopy(msg)]
    tool_calls: list[dict[str, Any]] = []
    converted: list[Any] = []
    tool_results: list[dict[str, Any]] = []
    reasoning = ""
    for block in content:
        kind = _value(block, "type", "", str)
        if kind == "text":
            converted.append(copy.deepcopy(block))  # the whole block, cache_control and all
        elif kind == "thinking":
            reasoning += _value(block, "thinking", "", str)
        elif kind == "image":
            image = _image_part(_value(block, "source", {}, dict))
            if image is not None:
                converted.append(image)
        elif kind == "tool_use":
            tool_calls.append({"id": _value(block, "id", "", str), "type": "function", "function": {
                "name": _value(block, "name", "", str), "arguments": _dump(_value(block, "input", {}))}})
        elif kind == "tool_result":
            tool_results.append(_tool_result(block))
    out: list[Any] = []
    if converted or tool_calls or reasoning:
        new: dict[str, Any] = {"role": role}
        if converted:
            new["content"] = converted
        else:
            new["content"] = ""
        if tool_calls:
            new["tool_calls"] = tool_calls
        if reasoning:
            new["reasoning_content"] = reasoning
        out.append(new)
    return out + tool_results


def _image_part(source: dict[str, Any]) -> dict[str, Any] | None:
    kind = _value(source, "type", "", str)
    if kind == "base64":
        media = _value(source, "media_type", "image/jpeg", str)
        return {"type": "image_url", "image_url": {"url": f"data:{media};base64,{_value(source, 'data', '', str)}"}}
    if kind == "url":
        return {"type": "image_url", "image_url": {"url": _value(source, "url", "", str)}}
    return None


def _tool_result(block: Any) -> dict[str, Any]:
    tool_use_id = _value(block, "tool_use_id", "", str)
    result = _value(block, "content", None)
    if isinstance(result, str):
        return {"role": "tool", "tool_call_id": tool_use_id, "content": result}
    if isinstance(result, list):
        text = ""
        parts: list[dict[str, Any]] = []
        has_images = False
        for c in result:
            kind = _value(c, "type", "", str)
            if kind == "text":
                piece = _value(c, "text", "", str)
                text += piece
                parts.append({"type": "text", "text": piece})
            elif kind == "image":
                has_images = True
                image = _image_part(_value(c, "source", {}, dict))
                if image is not None:
                    parts.append(image)
        return {"role": "tool", "tool_call_id": tool_use_id, "content": parts if has_images else text}
    return {"role": "tool", "tool_call_id": tool_use_id, "content": ""}


# -- Responses ---------------------------------------------------------------------------------------------------

def responses_to_chat(body: dict[str, Any]) -> dict[str, Any]:
    """`server_chat_convert_responses_to_chatcmpl`."""
    if "input" not in body:
        raise ConversionError("'input' is required")
    if _value(body, "previous_response_id", "", str):
        raise ConversionError("llama.cpp does not support 'previous_response_id'.")
    data = body["input"]
    out = {k: copy.deepcopy(v) for k, v in body.items() if k != "input"}
    messages: list[dict[str, Any]] = []
    if "instructions" in body:
        messages.append({"role": "system", "content": _value(body, "instructions", "", str)})
        out.pop("instructions", None)
    if isinstance(data, str):
        messages.append({"role": "user", "content": data})
    elif isinstance(data, list):
        for raw in data:
            _responses_item(copy.deepcopy(raw), messages)
    else:
        raise ConversionError("'input' must be a string or array of objects")
    out["messages"] = messages
    if "tools" in body:
        if not isinstance(body["tools"], list):
            raise ConversionError("'tools' must be an array of objects")
        tools = []
        for raw_tool in body["tools"]:
            tool = copy.deepcopy(raw_tool)
            if _value(tool, "type", "", str) != "function":
                continue  # the server skips non-function tools with a warning
            del tool["type"]
            if "strict" not in tool:
                tool["strict"] = True
            tools.append({"type": "function", "function": tool})
        out.pop("tools", None)
        if tools:
            out["tools"] = tools
    if "max_output_tokens" in body:
        out.pop("max_output_tokens", None)
        out["max_tokens"] = copy.deepcopy(body["max_output_tokens"])
    if "reasoning" in body:
        reasoning = body["reasoning"]
        if isinstance(reasoning, dict) and "effort" in reasoning:
            out["reasoning_effort"] = copy.deepcopy(reasoning["effort"])
        out.pop("reasoning", None)
    return out


def _is_str(item: Any, key: str) -> bool:
    return isinstance(item, dict) and isinstance(item.get(key), str)


def _is_list(item: Any, key: str) -> bool:
    return isinstance(item, dict) and isinstance(item.get(key), list)


def _responses_item(item: Any, messages: list[dict[str, Any]]) -> None:
    merge = bool(messages) and messages[-1].get("role") == "assistant"
    if _is_str(item, "content"):  # an input message's string content: one input_text part
        item["content"] = [{"text": item["content"], "type": "input_text"}]
    if _is_list(item, "content") and _is_str(item, "role") and item["role"] in ("user", "system", "developer"):
        parts = []
        for part in item["content"]:
            kind = _value(part, "type", "", str)
            if kind == "input_text":
                if not isinstance(part, dict) or "text" not in part:
                    raise ConversionError("'Input text' requires 'text'")
                parts.append({"text": part["text"], "type": "text"})
            elif kind == "input_image":
                if not isinstance(part, dict) or "image_url" not in part:
                    raise ConversionError("'image_url' is required")
                parts.append({"image_url": {"url": part["image_url"]}, "type": "image_url"})
            elif kind == "input_file":
                raise ConversionError("'input_file' is not supported by llamacpp at this moment")
            else:
                raise ConversionError("'type' must be one of 'input_text', 'input_image', or 'input_file'")
        item.pop("type", None)
        item.pop("status", None)
        item["content"] = parts
        messages.append(item)
    elif _is_str(item, "role") and item["role"] == "assistant" and _is_str(item, "type") and \
            item["type"] == "message":
        parts = _output_parts(item)
        if merge:
            previous = messages[-1]
            if not isinstance(previous.get("content"), list):
                previous["content"] = []
            previous["content"].extend(parts)
        else:
            item.pop("status", None)
            item.pop("type", None)
            item["content"] = parts
            messages.append(item)
    elif all(_is_str(item, k) for k in ("arguments", "call_id", "name", "type")) and item["type"] == "function_call":
        call = {"function": {"arguments": item["arguments"], "name": item["name"]}, "id": item["call_id"],
                "type": "function"}
        if merge:
            previous = messages[-1]
            if not isinstance(previous.get("tool_calls"), list):
                previous["tool_calls"] = []
            previous["tool_calls"].append(call)
        else:
            messages.append({"role": "assistant", "tool_calls": [call]})
    elif _is_str(item, "call_id") and (_is_str(item, "output") or _is_list(item, "output")) and \
            _is_str(item, "type") and item["type"] == "function_call_output":
        messages.append({"content": _tool_output(item["output"]), "role": "tool", "tool_call_id": item["call_id"]})
    elif _is_list(item, "summary") and _is_str(item, "type") and item["type"] == "reasoning":
        content = item.get("content")
        if not isinstance(content, list):
            raise ConversionError("item['content'] is not an array")
        if not content:
            raise ConversionError("item['content'] is empty")
        if not _is_str(content[0], "text"):
            raise ConversionError("item['content']['text'] is not a string")
        if merge:
            messages[-1]["reasoning_content"] = content[0]["text"]
        else:
            messages.append({"role": "assistant", "content": [], "reasoning_content": content[0]["text"]})
    else:
        raise ConversionError("Cannot determine type of 'item'")


def _output_parts(item: dict[str, Any]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    content = item.get("content")
    if isinstance(content, str):
        parts.append({"text": content, "type": "text"})
    elif isinstance(content, list):
        for part in content:
            kind = _value(part, "type", "", str)
            if kind in ("output_text", "input_text"):
                if not _is_str(part, "text"):
                    raise ConversionError("'Output text' requires 'text'")
                parts.append({"text": part["text"], "type": "text"})
            elif kind == "refusal":
                if not _is_str(part, "refusal"):
                    raise ConversionError("'Refusal' requires 'refusal'")
                parts.append({"refusal": part["refusal"], "type": "refusal"})
            else:
                raise ConversionError("'type' must be one of 'output_text' or 'refusal'")
    return parts


def _tool_output(output: Any) -> Any:
    if isinstance(output, str):
        return output
    converted = []
    for part in output:
        if not isinstance(part, dict) or "type" not in part:
            raise ConversionError("Output of tool call missing 'type' field")
        kind = part["type"]
        if kind not in ("input_text", "input_image"):
            raise ConversionError("Output of tool call should be 'Input text' or 'Input image'")
        if kind == "input_text":
            part["type"] = "text"
        else:
            if "image_url" not in part:
                raise ConversionError("'image_url' is required")
            part["type"] = "image_url"
            part["image_url"] = {"url": part["image_url"]}
        converted.append(part)
    return converted
