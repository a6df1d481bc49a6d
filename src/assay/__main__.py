import sys

from assay.cli import main

sys.exit(main())
