"""The command-line helpers the tests share (``run_cli``; ``refused`` for the tests of ``dpref run``; pytest puts
this folder on the path)."""

from dpref import cli


def run_cli(capsys, *argv):
    """(exit status, stdout, non-blank stderr lines) of ``dpref.cli.main(argv)``; argparse refusals exit through
    SystemExit."""
    try:
        code = cli.main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, [line for line in err.splitlines() if line.strip()]


def refused(capsys, *argv):
    """Run ``dpref run ARGV`` expecting a refusal: exit 2, nothing on stdout, ONE line on stderr starting with
    "dpref" (argparse's refusals raise SystemExit from the parser; ours return 2), no traceback and no warning.
    Returns the line."""
    try:
        code = cli.main(["run", *argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(("dpref run: error:", "dpref: error:")), err
    assert "Traceback" not in err and "Warning" not in err
    return lines[0]
