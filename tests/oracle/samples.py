"""Where the shared PassNet sample subgraphs are.

They are test data kept outside the repository (never copied into it): the
directory named by $PASSFS_SAMPLES, else ../shared/passnet-samples beside the
repository.  None when neither exists."""
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def samples_dir():
    for d in (os.environ.get("PASSFS_SAMPLES"),
              os.path.join(REPO, "..", "shared", "passnet-samples")):
        if d and os.path.isdir(d):
            return os.path.abspath(d)
    return None
