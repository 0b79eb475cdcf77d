// The TypeScript compiler as an oracle for the call graph (benchmark/test helper only, never a runtime
// dependency of analyzer). For each sampled function: every call site's definitions (Go to Definition)
// and, at interface/abstract member calls and calls of function-typed values, the implementations
// (Go to Implementation). Run by benchmarks/ts_oracle.py:
//   node ts_oracle.js CONFIG.json   (TS_MODULE=/path/to/node_modules/typescript, else require("typescript"))
// CONFIG: {root, files: [relative paths], paths: {tsconfig paths}, samples: [{node, file, line, end_line}]}
// Output: one JSON object per call site on stdout.
const ts = require(process.env.TS_MODULE || "typescript");
const fs = require("fs");
const path = require("path");

const cfg = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const root = cfg.root;
const files = cfg.files.map((f) => path.join(root, f));
const options = {
  allowJs: true, checkJs: false, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler, baseUrl: root, paths: cfg.paths, jsx: ts.JsxEmit.ReactJSX,
  skipLibCheck: true, noEmit: true, strict: false, allowImportingTsExtensions: true,
  experimentalDecorators: true, resolveJsonModule: true, types: [],
};
const versions = new Map(files.map((f) => [f, "1"]));
const host = {
  getScriptFileNames: () => files,
  getScriptVersion: (f) => versions.get(f) || "1",
  getScriptSnapshot: (f) => (fs.existsSync(f) ? ts.ScriptSnapshot.fromString(fs.readFileSync(f, "utf8")) : undefined),
  getCurrentDirectory: () => root,
  getCompilationSettings: () => options,
  getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
  fileExists: ts.sys.fileExists, readFile: ts.sys.readFile, readDirectory: ts.sys.readDirectory,
  directoryExists: ts.sys.directoryExists, getDirectories: ts.sys.getDirectories,
};
const ls = ts.createLanguageService(host, ts.createDocumentRegistry());
const program = ls.getProgram();
const checker = program.getTypeChecker();

function rel(f) {
  const r = path.relative(root, f);
  return r.startsWith("..") ? null : r.split(path.sep).join("/");
}
function lineOf(sf, pos) { return sf.getLineAndCharacterOfPosition(pos).line + 1; }

function namedOwner(node) {
  // the innermost enclosing named function-like declaration (closures belong to it)
  for (let n = node.parent; n; n = n.parent) {
    if (ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isConstructorDeclaration(n) ||
        ts.isGetAccessorDeclaration(n) || ts.isSetAccessorDeclaration(n)) return n;
    if ((ts.isArrowFunction(n) || ts.isFunctionExpression(n)) && n.parent &&
        (ts.isVariableDeclaration(n.parent) || ts.isPropertyAssignment(n.parent) || ts.isPropertyDeclaration(n.parent)))
      return n.parent.parent && ts.isVariableDeclarationList(n.parent.parent) ? n.parent.parent.parent : n.parent;
    if (ts.isClassDeclaration(n) || ts.isClassExpression(n)) return n;
  }
  return null;
}

function declNode(d) {
  const sf = program.getSourceFile(d.fileName);
  if (!sf) return null;
  let found = null;
  const pos = d.textSpan.start;
  (function visit(n) {
    if (pos >= n.getStart(sf) && pos < n.getEnd()) { found = n; ts.forEachChild(n, visit); }
  })(sf);
  // climb from the name to its declaration
  let n = found;
  while (n && !(ts.isFunctionLike(n) || ts.isClassLike(n) || ts.isPropertySignature(n) || ts.isPropertyDeclaration(n) ||
                ts.isParameter(n) || ts.isVariableDeclaration(n) || ts.isPropertyAssignment(n) ||
                ts.isShorthandPropertyAssignment(n) || ts.isInterfaceDeclaration(n) || ts.isTypeAliasDeclaration(n) ||
                ts.isEnumDeclaration(n) || ts.isModuleDeclaration(n) || ts.isImportSpecifier(n) || ts.isImportClause(n) ||
                ts.isNamespaceImport(n) || ts.isBindingElement(n)))
    n = n.parent;
  return n;
}

// a parameter of a closure handed to code outside the repos (`new Promise((resolve, reject) => …)`,
// a library callback): its value is supplied there, so no edge in the repos can name it
function suppliedOutside(param) {
  const fn = param.parent;
  if (!fn || !(ts.isArrowFunction(fn) || ts.isFunctionExpression(fn))) return false;
  const call = fn.parent;
  if (!call || !(ts.isCallExpression(call) || ts.isNewExpression(call))) return false;
  let callee = call.expression;
  if (ts.isPropertyAccessExpression(callee)) callee = callee.name;
  const sym = checker.getSymbolAtLocation(callee);
  const decls = (sym && sym.declarations) || [];
  // no declaration at all: a package the checkout does not install (vitest's `it(…)`, `it.skipIf(c)(…)`)
  return decls.every((d) => rel(d.getSourceFile().fileName) === null ||
                            d.getSourceFile().fileName.includes("node_modules"));
}

// an implementation that is a property given by name (`{ onDone: report }`, `{ report }`): the value is the
// function that name is bound to, not the function whose body writes the literal
function namedValue(n) {
  if (!n) return null;
  let ident = null;
  if (ts.isPropertyAssignment(n) && ts.isIdentifier(n.initializer)) ident = n.initializer;
  else if (ts.isShorthandPropertyAssignment(n)) ident = n.name;
  if (!ident) return null;
  let sym = ts.isShorthandPropertyAssignment(n) ? checker.getShorthandAssignmentValueSymbol(n)
    : checker.getSymbolAtLocation(ident);
  if (sym && sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
  for (const decl of (sym && sym.declarations) || []) {
    const fn = ts.isFunctionDeclaration(decl) || ts.isMethodDeclaration(decl) ||
      (ts.isVariableDeclaration(decl) && decl.initializer &&
       (ts.isArrowFunction(decl.initializer) || ts.isFunctionExpression(decl.initializer)));
    const r = rel(decl.getSourceFile().fileName);
    if (fn && r) return { file: r, line: lineOf(decl.getSourceFile(), (decl.name || decl).getStart()), kind: "function",
                          cls: "concrete" };
  }
  return null;
}

function classify(n) {
  if (!n) return "unknown";
  if (ts.isMethodSignature(n) || ts.isCallSignatureDeclaration(n)) return "interface";
  if ((ts.isMethodDeclaration(n) || ts.isPropertyDeclaration(n) || ts.isGetAccessorDeclaration(n)) &&
      n.modifiers && n.modifiers.some((m) => m.kind === ts.SyntaxKind.AbstractKeyword)) return "interface";
  if (ts.isFunctionLike(n) && !ts.isFunctionTypeNode(n)) return n.body ? "concrete" : "signature";
  if (ts.isClassLike(n)) return "concrete";
  if (ts.isPropertySignature(n) || ts.isPropertyDeclaration(n) || ts.isParameter(n) || ts.isVariableDeclaration(n) ||
      ts.isBindingElement(n) || ts.isPropertyAssignment(n) || ts.isShorthandPropertyAssignment(n)) {
    if (ts.isVariableDeclaration(n) && n.initializer && (ts.isArrowFunction(n.initializer) || ts.isFunctionExpression(n.initializer)))
      return "concrete";
    if (ts.isPropertyDeclaration(n) && n.initializer && (ts.isArrowFunction(n.initializer) || ts.isFunctionExpression(n.initializer)))
      return "concrete";
    if (ts.isPropertyAssignment(n) && (ts.isArrowFunction(n.initializer) || ts.isFunctionExpression(n.initializer)))
      return "concrete";
    return "value";
  }
  return "other";
}

for (const s of cfg.samples) {
  const file = path.join(root, s.file);
  const sf = program.getSourceFile(file);
  if (!sf) { console.log(JSON.stringify({ sample: s.node, error: "no source file" })); continue; }
  const calls = [];
  (function visit(n) {
    if (ts.isCallExpression(n) || ts.isNewExpression(n)) {
      const l = lineOf(sf, n.getStart(sf));
      if (l >= s.line && l <= s.end_line) {
        const owner = namedOwner(n);
        if (owner && lineOf(sf, owner.getStart(sf)) === s.line) calls.push(n);
      }
    }
    ts.forEachChild(n, visit);
  })(sf);
  for (const c of calls) {
    let callee = c.expression;
    while (callee && (ts.isParenthesizedExpression(callee) || ts.isNonNullExpression(callee) || ts.isAsExpression(callee)))
      callee = callee.expression;
    if (!callee || callee.kind === ts.SyntaxKind.ImportKeyword) continue;
    let at = callee;
    if (ts.isPropertyAccessExpression(callee)) at = callee.name;
    else if (ts.isElementAccessExpression(callee)) at = callee.argumentExpression;
    const pos = at.getStart(sf);
    const line = lineOf(sf, c.getStart(sf));
    let defs = [];
    try { defs = ls.getDefinitionAtPosition(file, pos) || []; } catch (e) { defs = []; }
    // a union receiver (`const m = c ? a.oauth : a.apiKey`): Go to Definition names one constituent's
    // member; the checker knows them all
    if (ts.isPropertyAccessExpression(callee)) {
      const recv = checker.getTypeAtLocation(callee.expression);
      if (recv && recv.isUnion()) {
        for (const sub of recv.types) {
          const prop = sub.getProperty(callee.name.text);
          for (const decl of (prop && prop.declarations) || []) {
            const dsf = decl.getSourceFile();
            const name = decl.name || decl;
            defs.push({ fileName: dsf.fileName, textSpan: { start: name.getStart(dsf), length: 0 }, name: callee.name.text,
                        kind: "method" });
          }
        }
      }
    }
    const out = { sample: s.node, line, text: callee.getText(sf).slice(0, 80), defs: [], impls: [] };
    let isInterface = false;
    for (const d of defs) {
      const r = rel(d.fileName);
      const n = declNode(d);
      const k = classify(n);
      if (k === "interface") isInterface = true;
      // for values: where the function value is declared (a parameter or property is filled by callers /
      // assignments in the repos; a local is usually bound from a call, often an npm package's, e.g. useState)
      let holder = !n ? "" : ts.isParameter(n) || (ts.isBindingElement(n) && ts.isParameter(n.parent.parent)) ? "parameter"
        : ts.isPropertySignature(n) || ts.isPropertyDeclaration(n) ? "property" : "local";
      if (holder === "parameter" && suppliedOutside(ts.isParameter(n) ? n : n.parent.parent)) holder = "external";
      out.defs.push({ file: r, line: lineOf(program.getSourceFile(d.fileName), d.textSpan.start), name: d.name, kind: d.kind,
                      cls: k, holder });
    }
    if (isInterface || out.defs.some((d) => d.cls === "value")) {
      let impls = [];
      try { impls = ls.getImplementationAtPosition(file, pos) || []; } catch (e) { impls = []; }
      for (const d of impls) {
        const r = rel(d.fileName);
        if (!r) continue;
        const n = declNode(d);
        const named = namedValue(n);  // `{ onDone: report }` / `{ report }`: the function named there runs
        if (named) { out.impls.push(named); continue; }
        out.impls.push({ file: r, line: lineOf(program.getSourceFile(d.fileName), d.textSpan.start), kind: d.kind, cls: classify(n) });
      }
    }
    console.log(JSON.stringify(out));
  }
}
