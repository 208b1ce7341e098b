#!/usr/bin/env python3
"""Runs the README's "What you come for" commands as written, on a copy of the demo's store.

Usage: .ci/readme_jobs.py BINARY DEMO_DB

Every line of the four job blocks runs through /bin/sh in a scratch folder holding `build/` (a
link to the binary's folder) and the demo's store as ./tailforge.db, with only these changes:
  - placeholders get real values: SRC (a tree `tailforge generate` writes), ID (a sample of the
    store), /path/to/translate (a script that rewrites cuda to hip), /srv/tailforge (a scratch
    folder); `sudo ` is dropped;
  - install-service writes its unit into the scratch folder (--out), not /etc/systemd/system;
  - `serve` runs in the background until its dashboard answers;
  - the OpenAI-compatible endpoints on 127.0.0.1:8000 (as vLLM serves a model) and :8080 (as
    llama.cpp's server does) are small servers started here, listing their model at /v1/models;
  - comment lines (`# ...`) are skipped.
Three kinds of line cannot run on a CI machine and are named, not run: `systemctl` (no systemd as
PID 1; tests/daemon/service_test.cpp checks the unit with systemd-analyze and the daemon under a
service manager; a copy of the demo's store then stands for the service's), the unbounded
`daemon` (README command 1 runs it, bounded by --demo) and a hosted API over https (no internet
here; tests/daemon/model_check_test.cpp checks https with a private CA).
A line fails when it exits non-zero (doctor: above 1, its report of what the machine lacks) or
prints nothing. Exit status 1 when any line fails.
"""
import http.server
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

JOB_HEADINGS = ["### Grow a dataset", "### Run a weekend unattended",
                "### Evaluate your own model", "### Query the taxonomy on Monday"]


def job_lines(readme):
    """The lines of the first ```sh block under each job heading."""
    lines = readme.splitlines()
    found = []
    for heading in JOB_HEADINGS:
        start = lines.index(heading)
        block = lines.index("```sh", start)
        end = lines.index("```", block + 1)
        found += [(heading, line) for line in lines[block + 1:end] if line.strip()]
    return found


class ChatHandler(http.server.BaseHTTPRequestHandler):
    """Answers chat completions the way an OpenAI-compatible server does: the last code block of
    the request, with cuda names rewritten to hip. Lists its one model at /v1/models."""

    served = "model"

    def do_GET(self):
        if self.path != "/v1/models":
            self.send_error(404)
            return
        data = json.dumps({"object": "list", "data": [{"id": self.served, "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if not self.path.endswith("/chat/completions"):
            self.send_error(404)
            return
        prompt = body["messages"][-1]["content"]
        blocks = re.findall(r"```[a-zA-Z+]*\n(.*?)```", prompt, re.S)
        code = (blocks[-1] if blocks else prompt).replace("cuda", "hip").replace("<hip_runtime.h>",
                                                                               "<hip/hip_runtime.h>")
        answer = {"id": "chatcmpl-ci", "object": "chat.completion", "model": body.get("model", ""),
                  "choices": [{"index": 0, "finish_reason": "stop",
                               "message": {"role": "assistant", "content": "```cpp\n" + code + "```"}}],
                  "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(code) // 4}}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def main():
    binary, demo_db = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    readme = open(os.path.join(repo, "README.md")).read()
    scratch = tempfile.mkdtemp(prefix="tailforge-readme-")
    os.symlink(os.path.dirname(binary), os.path.join(scratch, "build"))
    subprocess.run([binary, "backup", "--db", demo_db, "--out", os.path.join(scratch, "tailforge.db")], check=True,
                   stdout=subprocess.DEVNULL)
    os.makedirs(os.path.join(scratch, "srv"))
    translate = os.path.join(scratch, "translate")
    with open(translate, "w") as f:
        f.write("#!/bin/sh\nexec sed -e 's/cuda/hip/g' -e 's@<hip_runtime.h>@<hip/hip_runtime.h>@'\n")
    os.chmod(translate, 0o755)
    subprocess.run([binary, "generate", "--count", "2", "--out", os.path.join(scratch, "src")], check=True,
                   stdout=subprocess.DEVNULL)
    sample = sqlite3.connect(os.path.join(scratch, "tailforge.db")).execute(
        "SELECT id FROM sample WHERE status = 'verified' ORDER BY id LIMIT 1").fetchone()[0]

    servers = []
    for port, served in ((8000, "Qwen/Qwen2.5-Coder-7B-Instruct"), (8080, "coder.gguf")):
        handler = type("Handler%d" % port, (ChatHandler,), {"served": served})
        servers.append(http.server.ThreadingHTTPServer(("127.0.0.1", port), handler))
        threading.Thread(target=servers[-1].serve_forever, daemon=True).start()

    failed = 0
    for heading, line in job_lines(readme):
        command = line.replace("sudo ", "").replace("/srv/tailforge", os.path.join(scratch, "srv"))
        command = re.sub(r"\bSRC\b", "src", command).replace("/path/to/translate", translate)
        command = re.sub(r"\blineage ID\b", "lineage " + sample[:12], command)
        if " systemctl " in " " + command:
            print("named, not run (no systemd here; tests/daemon/service_test.cpp): " + line)
            # The service would now grow its store; the demo's store stands for it below.
            subprocess.run([binary, "backup", "--db", os.path.join(scratch, "tailforge.db"), "--out",
                            os.path.join(scratch, "srv", "grow.db")], check=True, stdout=subprocess.DEVNULL)
            continue
        if line.lstrip().startswith("#"):
            continue
        if "https://" in command and " model add " in command:
            print("named, not run (a hosted API: no internet here; model_check_test.cpp checks https): " + line)
            continue
        if re.search(r"tailforge daemon\s+#", command):
            print("named, not run (unbounded; README command 1 runs it with --demo): " + line)
            continue
        if " install-service " in command:
            command = command.replace(" install-service ", " install-service --out unit/tailforge.service ", 1)
        start = time.time()
        if re.search(r"tailforge serve\b", command):
            serve = subprocess.Popen(command, shell=True, cwd=scratch, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)
            ok, output = False, ""
            for _ in range(100):
                try:
                    page = urllib.request.urlopen("http://127.0.0.1:8470/", timeout=5).read().decode()
                    ok = "tailforge" in page
                    break
                except OSError:
                    time.sleep(0.2)
            os.killpg(serve.pid, 15)
            output = serve.communicate(timeout=30)[0].decode(errors="replace")
            rc = 0 if ok else 1
        else:
            run = subprocess.run(command, shell=True, cwd=scratch, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, timeout=600)
            rc, output = run.returncode, run.stdout.decode(errors="replace")
        # doctor exits 1 for what the machine lacks (no GPU here); that is its report, not a failure.
        ok = (rc == 0 or (" doctor " in command and rc == 1)) and output.strip() != ""
        print("%s %5.1f s  %s" % ("ok  " if ok else "FAIL", time.time() - start, line))
        if not ok:
            failed += 1
            print("  exit %d; output:\n  %s" % (rc, output[-3000:].replace("\n", "\n  ")))
    for server in servers:
        server.shutdown()
    shutil.rmtree(scratch, ignore_errors=True)
    print("README job commands: %d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
