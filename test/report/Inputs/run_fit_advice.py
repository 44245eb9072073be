"""Runs the command a report's fit advice suggests, as a report: the model
with every setting the advice names must fit the device it was reported on.
Usage: run_fit_advice.py REPORT.json EINC"""
import json
import shlex
import subprocess
import sys

report = json.load(open(sys.argv[1]))
advice = report["memory"]["fit_advice"]
command = shlex.split(advice["command"])
print("command:", advice["command"])
assert command[:2] == ["einc", "train"], command
device = report["device"]["name"]
out = subprocess.run([sys.argv[2], "report"] + command[2:] + ["--device", device, "--format", "json"],
                     check=True, capture_output=True, text=True).stdout
followed = json.loads(out)
print("fits:", followed["memory"]["fits"], "peak equal:",
      followed["memory"]["peak"] == advice["peak"])
