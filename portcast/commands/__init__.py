"""Command groups of the ``portcast`` CLI; each module defines ``register(app)``."""
