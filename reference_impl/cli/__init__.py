"""Subcommands of ``delta-ckpt`` (one module each; see :mod:`reference_impl.cli.main`)."""
