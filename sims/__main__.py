import sys

from sims.cli import main

sys.exit(main())
