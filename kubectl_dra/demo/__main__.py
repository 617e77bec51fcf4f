"""Print the path of the demo cluster state (``--claims``: the example files, one per line)."""

import sys

from . import cluster_path, example_paths

if __name__ == "__main__":
    if "--claims" in sys.argv[1:]:
        print("\n".join(str(p) for p in example_paths()))
    else:
        print(cluster_path())
