"""Usage reconciliation: replay the pinned upstream usage code (Pi → dsh) on provider usage scenarios."""
