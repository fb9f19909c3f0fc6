"""Charts for operators: the simulation report and the local room's live view (`charts` extra)."""
