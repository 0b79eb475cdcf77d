"""`analyze recheck`: what changed on the request path between two pin sets.

Public API:
- `recheck(ctx, old_pins, new_pins, spec_from, spec_to, notes=…, out_dir=…) -> (result, report_path)`.
- `compare(g_old, g_new, old_pins_json, new_pins_json, spec_from, spec_to, reader, notes)` (pure; no I/O
  besides reading source through `reader`), result schema in `analyzer.recheck.compare`.
- `old_pins(lock, from_, from_commits)`, `pins_label(pins)`, `render_recheck_markdown(result)`.
- Verdicts (`path_change`) and exit codes: `analyzer.recheck.verdict`; causes: `analyzer.recheck.causes`.
  0 unchanged, 1 changed bodies / rerouted / unchanged but noteworthy, 2 broken.
- Extension point for reconciliation deltas: `analyzer.recheck.usage_deltas` (calls
  `analyzer.usage.ledger_for_pins(ctx, pins)` when it exists).
"""

from analyzer.recheck.compare import EXIT_BROKEN, EXIT_CHANGED, EXIT_OK, compare
from analyzer.recheck.pinsets import old_pins, pins_label
from analyzer.recheck.render import print_summary, render_recheck_markdown
from analyzer.recheck.run import recheck

__all__ = ["EXIT_BROKEN", "EXIT_CHANGED", "EXIT_OK", "compare", "old_pins", "pins_label", "print_summary",
           "render_recheck_markdown", "recheck"]
