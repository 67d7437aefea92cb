"""Builtins that store into a variable an argument names, and builtins that assign from
text the line does not show. bash evaluates an array subscript in such a name
(``test -v 'a[$(cmd)]'`` runs ``cmd``), so the names must be plain ones."""

from __future__ import annotations

from tether.permissions.shell.lexical import NAME
from tether.permissions.shell.model import SimpleCommand

# Builtins that store into a variable named by an argument; bash evaluates a subscript in
# that name, so the name must be a plain one. Value: options that take a value, and the
# options whose value is such a name.
NAME_BUILTINS: dict[str, tuple[str, str]] = {
    "read": ("adinNptu", "a"),
    "mapfile": ("dnOsuCc", ""),
    "readarray": ("dnOsuCc", ""),
    "unset": ("", ""),
    "export": ("", ""),
    "readonly": ("", ""),
    "declare": ("", ""),
    "typeset": ("", ""),
    "local": ("", ""),
    "getopts": ("", ""),
    "wait": ("p", "p"),
    "printf": ("v", "v"),
    "test": ("", ""),
    "[": ("", ""),
}
# Builtins that assign variables from text the line does not show.
TAINTING = frozenset({"read", "mapfile", "readarray", "getopts", "source", ".", "eval", "set"})


def names_are_plain(cmd: SimpleCommand) -> bool:
    """Do the variable names this builtin stores into carry no subscript to evaluate?"""
    name = cmd.words[0].text
    words = cmd.words[1:]
    if name in ("test", "["):
        checked = [words[i + 1].value for i, w in enumerate(words[:-1]) if w.text == "-v"]
        return all(n is not None and NAME.fullmatch(n) for n in checked)
    takes_value, name_options = NAME_BUILTINS[name]
    names: list[str | None] = []
    operands: list[str | None] = []
    i = 0
    while i < len(words):
        text = words[i].value
        if text is None and operands and name in ("printf", "wait"):
            operands.append(text)  # a format argument: options are over
            i += 1
            continue
        if text is None:
            return False  # a name (or an option naming one) decided at run time
        if text == "--" and not operands:
            operands += [w.value for w in words[i + 1 :]]
            break
        if text.startswith("-") and len(text) > 1 and not operands:  # builtins do not permute
            for j in range(1, len(text)):
                if text[j] in takes_value:
                    value: str | None = text[j + 1 :]
                    if not value:
                        i += 1
                        value = words[i].value if i < len(words) else ""
                    if text[j] in name_options:
                        names.append(value)
                    break
        else:
            operands.append(text)
        i += 1
    if name == "getopts":
        names += operands[1:2]
    elif name not in ("printf", "wait"):
        names += [o.split("=", 1)[0] if o is not None else None for o in operands]
    return all(n is not None and NAME.fullmatch(n) for n in names)
