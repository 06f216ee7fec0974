"""python -m softmax_lab COMMAND [options]: the `softmax-lab` command with the Python
backends registered first."""
import sys

from .api import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
