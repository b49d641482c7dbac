"""Run a command in a real pseudo-terminal and answer its prompts, as a person at a keyboard would.

usage: pty-driver.py <json> where json = {"argv": [...], "cwd": "...", "answers": [{"expect": regex, "send": text}], "timeout": s}
An answer may send a signal to the command instead of typing ({"expect": regex, "signal": "SIGINT"}): a `kill` from
another terminal, not a key press.
Prints one JSON line: {"code": exit code, "output": everything the terminal showed, "answered": n}.
"""
import json
import os
import pty
import re
import select
import signal
import sys
import time

spec = json.loads(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.chdir(spec["cwd"])
    os.execvp(spec["argv"][0], spec["argv"])

def finish(status):
    print(json.dumps({"code": os.waitstatus_to_exitcode(status), "output": output.decode("utf8", "replace"), "answered": answered}))
    sys.exit(0)


output = b""
answers = list(spec.get("answers", []))
answered = 0
scanned = 0
deadline = time.time() + spec.get("timeout", 60)
while time.time() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.1)
    if ready:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            chunk = b""
        if not chunk:
            # The terminal closed: the command exited (or is exiting).
            _, status = os.waitpid(pid, 0)
            finish(status)
        output += chunk
    if answers:
        text = output[scanned:].decode("utf8", "replace")
        match = re.search(answers[0]["expect"], text)
        if match:
            scanned += len(text[: match.end()].encode("utf8"))
            answer = answers.pop(0)
            if "signal" in answer:
                os.kill(pid, getattr(signal, answer["signal"]))
            else:
                os.write(fd, answer["send"].encode("utf8"))
            answered += 1
    finished, status = os.waitpid(pid, os.WNOHANG)
    if finished:
        # Drain what is left on the terminal.
        while True:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if not ready:
                break
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
        finish(status)
os.kill(pid, 9)
print(json.dumps({"code": None, "output": output.decode("utf8", "replace"), "answered": answered, "timedOut": True}))
