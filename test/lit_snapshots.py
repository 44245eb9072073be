# lit's shell-test format, splitting off the snapshot tests (test/lit.cfg.py,
# docs/testing.md "Snapshots"): a file with a line starting "# SNAPSHOT:" (or
# "// SNAPSHOT:") is one. mode "skip" runs the others only, "only" these only,
# "" all; a test left out is reported unsupported.
import lit.formats
import lit.Test

MARKERS = ("# SNAPSHOT:", "// SNAPSHOT:")


def is_snapshot(path):
    with open(path, errors="replace") as f:
        return any(line.startswith(MARKERS) for line in f)


class ShTestSplittingSnapshots(lit.formats.ShTest):
    def __init__(self, mode, execute_external=False):
        super().__init__(execute_external)
        self.mode = mode

    def execute(self, test, litConfig):
        if self.mode and is_snapshot(test.getSourcePath()) != (self.mode == "only"):
            return lit.Test.Result(lit.Test.UNSUPPORTED, "EINC_LIT_SNAPSHOTS=" + self.mode)
        return super().execute(test, litConfig)
