"""`make fuzz` (`python -m scripts.fuzz`, described in __main__.py): randomized hostile bodies
against the real service, run for a set time."""
