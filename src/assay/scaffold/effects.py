"""Side effects outside the sandbox, read from a function's name and from the code it runs.

A function whose name says it writes, deletes, sends or runs something, or whose
code (or the project code it calls) opens a file for writing, deletes or moves
files, starts a process or opens a connection, gets no target: fuzzing it would
do that thousands of times.
"""

from __future__ import annotations

import ast

from assay.scaffold.api import Function, Project, reached

#: Words in a function's name that say it acts on the world (split on ``_``).
EFFECT_WORDS = {
    "write": "writes",
    "save": "saves",
    "delete": "deletes",
    "unlink": "deletes",
    "rmtree": "deletes",
    "send": "sends",
    "upload": "uploads",
    "download": "downloads",
    "fetch": "fetches over the network",
    "connect": "connects",
    "serve": "serves",
    "listen": "listens",
    "install": "installs",
    "exec": "executes",
    "execute": "executes",
    "spawn": "spawns processes",
    "shell": "runs a shell",
    "mkdir": "creates folders",
    "publish": "publishes",
    "kill": "kills processes",
}
#: Called names (dotted, as written) that act outside the sandbox, with what they do.
EFFECT_CALLS = {
    "subprocess": "starts a process",
    "os.system": "runs a shell command",
    "os.popen": "runs a shell command",
    "os.exec": "replaces the process",
    "os.spawn": "starts a process",
    "os.remove": "deletes files",
    "os.unlink": "deletes files",
    "os.rmdir": "deletes folders",
    "os.removedirs": "deletes folders",
    "os.rename": "renames files",
    "os.replace": "renames files",
    "os.mkdir": "creates folders",
    "os.makedirs": "creates folders",
    "os.kill": "kills processes",
    "shutil.rmtree": "deletes folders",
    "shutil.move": "moves files",
    "shutil.copy": "copies files",
    "socket": "opens sockets",
    "urllib.request": "uses the network",
    "urlopen": "uses the network",
    "requests": "uses the network",
    "httpx": "uses the network",
    "http.client": "uses the network",
    "smtplib": "sends mail",
    "ftplib": "uses the network",
    "webbrowser": "opens a browser",
}
#: Method names that write or delete whatever they are called on (``Path.write_text``).
EFFECT_METHODS = {
    "write_text": "writes files",
    "write_bytes": "writes files",
    "unlink": "deletes files",
    "rmdir": "deletes folders",
    "touch": "creates files",
    "mkdir": "creates folders",
    "symlink_to": "creates links",
}


def side_effect(project: Project, fn: Function) -> str | None:
    """Why fuzzing ``fn`` would act outside the sandbox, or ``None`` when nothing says so."""
    for word in fn.name.lower().split("_"):
        if word in EFFECT_WORDS:
            return f"its name says it {EFFECT_WORDS[word]} ({word!r})"
    for module, node in reached(project, fn.module, fn.node):
        key = ("effect", id(node))
        if key not in project.memo:
            project.memo[key] = next(
                (what for call in ast.walk(node) if isinstance(call, ast.Call) and (what := _effect_of(call))), None
            )
        if project.memo[key]:
            return f"{module.name}.{getattr(node, 'name', '?')} {project.memo[key]}"
    return None


def _effect_of(call: ast.Call) -> str | None:
    name = _dotted(call.func)
    if name == "open" or name.endswith(".open") and name.split(".")[0] in ("io", "os", "codecs"):
        mode = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"), None)
        if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and any(c in mode.value for c in "wax+"):
            return f"opens a file for writing (open(..., {mode.value!r}))"
        return None
    for prefix, what in EFFECT_CALLS.items():
        if name == prefix or name.startswith(prefix + ".") or (name.startswith(prefix) and prefix.startswith("os.")):
            return f"{what} ({name})"
    if isinstance(call.func, ast.Attribute) and call.func.attr in EFFECT_METHODS:
        return f"{EFFECT_METHODS[call.func.attr]} (.{call.func.attr}())"
    return None


def _dotted(expr: ast.expr) -> str:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        inner = _dotted(expr.value)
        return f"{inner}.{expr.attr}" if inner else ""
    return ""
