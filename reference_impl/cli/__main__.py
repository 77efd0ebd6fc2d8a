"""``python -m reference_impl.cli``: the ``delta-ckpt`` command line."""

import sys

from reference_impl.cli.main import main

sys.exit(main())
