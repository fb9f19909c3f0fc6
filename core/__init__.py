"""Beekeeper's core: the room settings model and the data model, standard library only."""
