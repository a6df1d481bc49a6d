"""Commands printed exactly: quoted once for a POSIX shell, never through ``repr``.

``repr`` doubles every backslash (``find . -exec rm {} \\;``); a user copying a
finding into a shell or a bug report needs the command itself.
"""

from __future__ import annotations

import shlex

_ANSI_C = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def quote_command(command: str) -> str:
    """``command`` quoted once for a POSIX shell, so that the shell reads it back unchanged.

    ``'…'`` keeps every character as it is (a single quote is written ``'\\''``;
    ``"…"`` when the command holds one and nothing that double quotes expand); a command
    holding a newline or other control character is written ``$'…'`` (bash's ANSI-C
    quoting) so it stays on one line.
    """
    if not any(ord(c) < 32 or ord(c) == 127 for c in command):
        if "'" in command and not any(c in command for c in '"$`\\!'):
            return f'"{command}"'
        if shlex.quote(command) == command:
            return command
        return "'" + command.replace("'", "'\\''") + "'"
    body = "".join(_ANSI_C.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 32 or ord(c) == 127 else c) for c in command)
    return f"$'{body}'"
