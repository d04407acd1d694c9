"""The file-system calls of two agent editor tools, replayed without them.

tests/cli/mount_editors.sh runs this against a mounted task.  Each tool is
reproduced at the level of the calls it makes on the file (stat, open,
read, write, close, rename), not its output formatting:

oh   OpenHands' OHEditor (openhands-aci, openhands_aci/editor/editor.py and
     encoding.py, read from its sources): one instance for the calls of a
     process, as OpenHands keeps one.  view: exists; is_dir; validate_file
     (exists, is_file, getsize, binaryornot's is_binary: open 'rb', read 1024);
     the encoding check (getsize, open 'rb', read up to 1 MiB, cached per
     path); count the lines (open 'r', iterate); read_file (validate_file
     again, open 'r', read all).  str_replace: the same checks, read_file,
     then write_file in place (validate_file, open 'w': O_TRUNC, write,
     close), then read_file of the snippet.  create: exists must be false,
     then open 'w'.  insert: a tempfile.NamedTemporaryFile in the system
     temporary directory, then shutil.move onto the file (a copy across file
     systems: open 'wb', write, chmod, utime, unlink of the temporary).  The
     encoding check before create is skipped here: the file does not exist
     yet (where OHEditor would stat a missing file).
swe  SWE-agent's str_replace_editor (tools/edit_anthropic/bin/
     str_replace_editor, read from its sources): a process per call.  view:
     is_absolute, exists, is_dir, Path.read_text; str_replace: read_text,
     write_text (open 'w'); create: parent exists, write_text.

Usage: python3 replay.py STEPS_JSON, STEPS a list of [tool, command, path,
{args}]; prints one JSON line per step: {"ok": true, "secs": s, "out": text}
or {"ok": false, "secs": s, "error": "OSError: ..."}.
"""
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path


class OH:
    def __init__(self):
        self.enc = {}

    def is_binary(self, p):
        with open(p, "rb") as f:
            chunk = f.read(1024)
        return b"\0" in chunk

    def validate_file(self, p):
        if not p.exists() or not p.is_file():
            return
        os.path.getsize(p)
        if self.is_binary(p):
            raise ValueError("binary")

    def encoding(self, p):
        if p.is_dir():
            return None
        if str(p) not in self.enc:
            n = min(os.path.getsize(p), 1 << 20)
            with open(p, "rb") as f:
                f.read(n)
            self.enc[str(p)] = "utf-8"
        return self.enc[str(p)]

    def validate_path(self, cmd, p):
        ex = p.exists()
        if cmd == "create" and ex:
            raise FileExistsError(str(p))
        if cmd != "create" and not ex:
            raise FileNotFoundError(str(p))
        if cmd != "view" and p.is_dir():
            raise IsADirectoryError(str(p))

    def read_file(self, p, start=None, end=None):
        enc = self.encoding(p)
        self.validate_file(p)
        with open(p, "r", encoding=enc) as f:
            if start is None:
                return "".join(f)
            return "".join(l for i, l in enumerate(f, 1) if start <= i <= end)

    def write_file(self, p, text):
        enc = self.encoding(p) if p.exists() else "utf-8"
        self.validate_file(p)
        with open(p, "w", encoding=enc) as f:
            f.write(text)

    def view(self, p):
        self.validate_path("view", p)
        p.is_dir()
        self.validate_file(p)
        enc = self.encoding(p)
        with open(p, encoding=enc) as f:
            sum(1 for _ in f)
        return self.read_file(p)

    def str_replace(self, p, old_str, new_str):
        self.validate_path("str_replace", p)
        self.encoding(p)
        self.validate_file(p)
        content = self.read_file(p)
        if content.count(old_str) != 1:
            raise ValueError("old_str occurs %d times" % content.count(old_str))
        idx = content.index(old_str)
        line = content.count("\n", 0, idx) + 1
        self.write_file(p, content[:idx] + new_str + content[idx + len(old_str):])
        return self.read_file(p, max(1, line - 4), line + 4 + new_str.count("\n"))

    def create(self, p, file_text):
        self.validate_path("create", p)
        self.write_file(p, file_text)
        return "created"

    def insert(self, p, insert_line, new_str):
        self.validate_path("insert", p)
        enc = self.encoding(p)
        self.validate_file(p)
        with tempfile.NamedTemporaryFile(mode="w", encoding=enc, delete=False) as tmp:
            with open(p, "r", encoding=enc) as f:
                for i, line in enumerate(f, 1):
                    if i > insert_line:
                        break
                    tmp.write(line)
            for line in new_str.split("\n"):
                tmp.write(line + "\n")
            with open(p, "r", encoding=enc) as f:
                for i, line in enumerate(f, 1):
                    if i > insert_line:
                        tmp.write(line)
        shutil.move(tmp.name, p)
        return self.read_file(p)


class SWE:
    def validate_path(self, cmd, p):
        if not p.is_absolute():
            raise ValueError("not absolute")
        if not p.exists() and cmd != "create":
            raise FileNotFoundError(str(p))
        if p.exists() and cmd == "create":
            raise FileExistsError(str(p))
        if p.is_dir() and cmd != "view":
            raise IsADirectoryError(str(p))

    def view(self, p):
        self.validate_path("view", p)
        p.is_dir()
        return p.read_text()

    def str_replace(self, p, old_str, new_str):
        self.validate_path("str_replace", p)
        content = p.read_text().expandtabs()
        old_str, new_str = old_str.expandtabs(), new_str.expandtabs()
        if content.count(old_str) != 1:
            raise ValueError("old_str occurs %d times" % content.count(old_str))
        p.write_text(content.replace(old_str, new_str), encoding="utf-8")
        return "edited"

    def create(self, p, file_text):
        self.validate_path("create", p)
        if not p.parent.exists():
            raise FileNotFoundError(str(p.parent))
        p.write_text(file_text, encoding="utf-8")
        return "created"


def main():
    tools = {"oh": OH(), "swe": None}
    for tool, cmd, path, args in json.loads(sys.argv[1]):
        t = tools[tool] if tool == "oh" else SWE()     # swe: a fresh tool per call
        t0 = time.monotonic()
        try:
            out = getattr(t, cmd)(Path(path), **args)
            r = {"ok": True, "out": out}
        except Exception as e:      # an OSError here is what the test looks for
            r = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
        r["secs"] = round(time.monotonic() - t0, 3)
        print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
