"""Real applications (Pi, dsh) as clients: installed at their pinned versions, run in private homes."""
