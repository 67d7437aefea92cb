"""The programs whose command lines the policy reads, option by option.

Each entry says which options take a value, which make the command more than a reader
(write a file, run a program, read files the line does not name), which follow symlinks
while walking a tree, which name a file to read, and what the operands are. Option names
are as the programs' ``--help`` print them (GNU coreutils, grep, diffutils, ripgrep).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tether.permissions.shell.options import Options

Operands = Literal["paths", "none", "pattern"]
"""``paths``: every operand is a file read; ``none``: operands are text; ``pattern``: the
first operand is a pattern unless an option gave one, the rest are files."""


@dataclass(frozen=True)
class Program:
    options: Options
    unsafe: frozenset[str] = field(default_factory=lambda: frozenset[str]())
    """Options after which the command is not read-only."""
    follows: frozenset[str] = field(default_factory=lambda: frozenset[str]())
    """Options that follow symlinks while walking directories (reads beyond the paths)."""
    path_options: frozenset[str] = field(default_factory=lambda: frozenset[str]())
    """Options whose value is a file the command reads."""
    operands: Operands = "paths"
    max_paths: int | None = None
    """Operands beyond this many are written (``uniq IN OUT``)."""
    pattern_options: frozenset[str] = field(default_factory=lambda: frozenset[str]())
    """For ``pattern``: options that give the pattern, making the first operand a file."""


def _set(names: str) -> frozenset[str]:
    return frozenset(names.split())


def program(
    valued: str = "",
    long: str = "",
    *,
    unsafe: str = "",
    follows: str = "",
    paths: str = "",
    operands: Operands = "paths",
    max_paths: int | None = None,
    pattern_options: str = "",
    attached: str = "",
) -> Program:
    return Program(
        Options.of(valued, long + " help version", attached=attached),
        _set(unsafe),
        _set(follows),
        _set(paths),
        operands,
        max_paths,
        _set(pattern_options),
    )


_GREP = program(
    "efmABCdD",
    "extended-regexp fixed-strings basic-regexp perl-regexp regexp= file= ignore-case "
    "no-ignore-case word-regexp line-regexp null-data no-messages invert-match max-count= "
    "byte-offset line-number line-buffered with-filename no-filename label= only-matching "
    "quiet silent binary-files= text directories= devices= recursive dereference-recursive "
    "include= exclude= exclude-from= exclude-dir= files-without-match files-with-matches "
    "count initial-tab null before-context= after-context= context= group-separator= "
    "no-group-separator color colour binary",
    follows="-R --dereference-recursive",
    paths="-f --file --exclude-from",
    operands="pattern",
    pattern_options="-e -f --regexp --file",
)
_RG = program(
    "ABCEefgjmMrtTd",
    "after-context= before-context= context= color= colors= context-separator= "
    "dfa-size-limit= encoding= engine= field-context-separator= field-match-separator= "
    "file= glob= iglob= ignore-file= max-columns= max-count= max-depth= max-filesize= "
    "path-separator= pre= pre-glob= regex-size-limit= regexp= replace= sort= sortr= "
    "threads= type= type-add= type-clear= type-not= hyperlink-format= generate= "
    "hostname-bin= auto-hybrid-regex binary block-buffered byte-offset case-sensitive "
    "column count count-matches crlf debug files files-with-matches files-without-match "
    "fixed-strings follow glob-case-insensitive heading hidden ignore-case ignore-file-"
    "case-insensitive include-zero invert-match json line-buffered line-number "
    "line-regexp max-columns-preview mmap multiline multiline-dotall no-config "
    "no-filename no-heading no-hidden no-ignore no-ignore-dot no-ignore-exclude "
    "no-ignore-files no-ignore-global no-ignore-messages no-ignore-parent no-ignore-vcs "
    "no-line-number no-messages no-mmap no-pcre2-unicode no-require-git no-unicode null "
    "null-data one-file-system only-matching passthru pcre2 pcre2-version pretty print0 "
    "quiet search-zip smart-case stats text trim type-list unrestricted vimgrep "
    "with-filename word-regexp no-follow no-search-zip no-stats no-context-separator",
    unsafe="--pre --pre-glob --hostname-bin",
    follows="-L --follow",
    paths="-f --file --ignore-file",
    operands="pattern",
    pattern_options="-e -f --regexp --file --files --type-list",
)
_CHECKSUM = program(
    "",
    "binary check tag text zero ignore-missing quiet status strict warn",
    unsafe="-c --check",  # reads the files a list names
)

READERS: dict[str, Program] = {
    "cat": program(
        "",
        "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting",
    ),
    "head": program("nc", "bytes= lines= quiet silent verbose zero-terminated"),
    "tail": program(
        "ncs",
        "bytes= follow lines= max-unchanged-stats= pid= quiet retry silent sleep-interval= "
        "verbose zero-terminated",
    ),
    "wc": program(
        "",
        "bytes chars lines files0-from= max-line-length words total=",
        paths="--files0-from",
    ),
    "sort": program(
        "kotST",
        "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort "
        "ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort "
        "random-source= reverse sort= version-sort batch-size= check compress-program= "
        "debug files0-from= key= merge output= stable buffer-size= field-separator= "
        "temporary-directory= parallel= unique zero-terminated",
        unsafe="-o --output --compress-program -T --temporary-directory",
        paths="--files0-from --random-source",
    ),
    "uniq": program(
        "fsw",
        "count repeated all-repeated skip-fields= skip-chars= unique check-chars= "
        "ignore-case zero-terminated group",
        max_paths=1,
    ),
    "cut": program(
        "bcdf",
        "bytes= characters= delimiter= fields= complement only-delimited output-delimiter= "
        "zero-terminated",
    ),
    "ls": program(
        "ITw",
        "all almost-all author escape block-size= ignore-backups color classify file-type "
        "format= full-time group-directories-first no-group human-readable si "
        "dereference-command-line dereference-command-line-symlink-to-dir hide= hyperlink "
        "indicator-style= inode ignore= kibibytes dereference literal numeric-uid-gid "
        "hide-control-chars show-control-chars quote-name quoting-style= reverse recursive "
        "size sort= time= time-style= tabsize= width= context zero dired directory",
    ),
    "du": program(
        "BdtX",
        "null all apparent-size block-size= bytes total dereference-args dereference "
        "count-links max-depth= human-readable inodes no-dereference separate-dirs si "
        "summarize threshold= time time-style= exclude-from= exclude= one-file-system "
        "files0-from=",
        follows="-L --dereference",
        paths="-X --exclude-from --files0-from",
    ),
    "df": program(
        "Btx",
        "all block-size= human-readable si inodes local no-sync output portability sync "
        "total type= print-type exclude-type=",
    ),
    "stat": program("c", "dereference file-system format= printf= terse cached="),
    "file": program(
        "efFmP",
        "brief checking-printout debug exclude= exclude-quiet= extension files-from= "
        "keep-going list mime mime-type mime-encoding magic-file= no-buffer no-dereference "
        "no-pad no-sandbox dereference parameter= preserve-date print0 raw separator= "
        "special-files uncompress uncompress-noreport compile apple",
        unsafe="-C --compile",
        paths="-f --files-from -m --magic-file",
    ),
    "tree": program(
        "LPIoHT",
        "gitignore gitfile= ignore-case matchdirs metafirst prune info infofile= noreport "
        "charset= filelimit= timefmt= si du inodes device dirsfirst filesfirst sort= "
        "nolinks hintro= houtro= fromfile fromtabfile fflinks",
        unsafe="-o -R",
        follows="-l",
        paths="--gitfile --infofile --hintro --houtro",
    ),
    "grep": _GREP,
    "egrep": _GREP,
    "fgrep": _GREP,
    "rg": _RG,
    "diff": program(
        "CDFILSUWxX",
        "from-file= to-file= exclude= exclude-from= ignore-matching-lines= "
        "show-function-line= label= starting-file= line-format= old-line-format= "
        "new-line-format= unchanged-line-format= old-group-format= new-group-format= "
        "changed-group-format= unchanged-group-format= ifdef= horizon-lines= tabsize= "
        "width= palette= color context unified brief ed expand-tabs ignore-all-space "
        "ignore-blank-lines ignore-case ignore-file-name-case ignore-space-change "
        "ignore-tab-expansion ignore-trailing-space initial-tab left-column minimal "
        "new-file no-dereference no-ignore-file-name-case normal paginate rcs recursive "
        "report-identical-files show-c-function side-by-side speed-large-files "
        "strip-trailing-cr suppress-blank-empty suppress-common-lines text "
        "unidirectional-new-file",
        paths="-X --exclude-from --from-file --to-file",
    ),
    "cmp": program("inc", "print-bytes ignore-initial= verbose bytes= quiet silent"),
    "comm": program("", "check-order nocheck-order output-delimiter= total zero-terminated"),
    "join": program("aejotv12", "ignore-case check-order nocheck-order header zero-terminated"),
    "paste": program("d", "delimiters= serial zero-terminated"),
    "nl": program(
        "bdfhilnsvw",
        "body-numbering= section-delimiter= footer-numbering= header-numbering= "
        "line-increment= join-blank-lines= number-format= no-renumber number-separator= "
        "starting-line-number= number-width=",
    ),
    "tac": program("s", "before regex separator="),
    "rev": program(),
    "od": program(
        "AjNSt",
        "address-radix= endian= skip-bytes= read-bytes= strings format= output-duplicates "
        "width traditional",
        attached="w",
    ),
    "base64": program("w", "decode ignore-garbage wrap="),
    "base32": program("w", "decode ignore-garbage wrap="),
    "strings": program(
        "entTs",
        "all data print-file-name bytes= radix= encoding= target= output-separator= "
        "include-all-whitespace unicode=",
    ),
    "xxd": program("cglnoRs", "", max_paths=1),
    "hexdump": program("efns", "format= format-file= length= skip= no-squeezing", paths="-f"),
    "fold": program("w", "bytes spaces width="),
    "fmt": program(
        "pgw", "crown-margin prefix= split-only tagged-paragraph uniform-spacing width= goal="
    ),
    "expand": program("t", "initial tabs="),
    "unexpand": program("t", "all first-only tabs="),
    "md5sum": _CHECKSUM,
    "sha1sum": _CHECKSUM,
    "sha224sum": _CHECKSUM,
    "sha256sum": _CHECKSUM,
    "sha384sum": _CHECKSUM,
    "sha512sum": _CHECKSUM,
    "b2sum": program(
        "l",
        "binary check tag text zero ignore-missing quiet status strict warn length=",
        unsafe="-c --check",
    ),
    "cksum": program(
        "al", "algorithm= base64 check length= raw tag untagged zero debug", unsafe="-c --check"
    ),
    "readlink": program(
        "",
        "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent "
        "verbose zero",
    ),
    "realpath": program(
        "",
        "canonicalize-existing canonicalize-missing logical physical quiet relative-base= "
        "relative-to= no-symlinks strip zero",
        paths="--relative-base --relative-to",
    ),
    # Text in, text out: operands are not files.
    "echo": program(operands="none"),
    "printf": program("v", operands="none", unsafe="-v"),
    "basename": program("s", "multiple suffix= zero", operands="none"),
    "dirname": program("", "zero", operands="none"),
    "seq": program("fs", "equal-width format= separator=", operands="none"),
    "tr": program("", "complement delete squeeze-repeats truncate-set1", operands="none"),
    "true": program(operands="none"),
    "false": program(operands="none"),
    ":": program(operands="none"),
    "pwd": program(operands="none"),
    "which": program(
        "", "all skip-alias read-alias skip-functions read-functions", operands="none"
    ),
    "type": program(operands="none"),
    "sleep": program(operands="none"),
    "whoami": program(operands="none"),
    "id": program("", "context group groups name real user zero", operands="none"),
    "uname": program(
        "",
        "all kernel-name nodename kernel-release kernel-version machine processor "
        "hardware-platform operating-system",
        operands="none",
    ),
    "nproc": program("", "all ignore=", operands="none"),
    "arch": program(operands="none"),
    "test": program(operands="none"),
    "[": program(operands="none"),
    "[[": program(operands="none"),
    "((": program(operands="none"),
}
"""Programs that only read, given none of their ``unsafe`` options."""

FILE_COMMANDS: dict[str, Options] = {
    "mkdir": Options.of("m", "mode= parents verbose context help version"),
    "touch": Options.of("drt", "no-create date= no-dereference reference= time= help version"),
    "rm": Options.of(
        "",
        "force interactive one-file-system no-preserve-root preserve-root recursive dir "
        "verbose help version",
    ),
    "rmdir": Options.of("", "ignore-fail-on-non-empty parents verbose help version"),
    "mv": Options.of(
        "St",
        "backup suffix= target-directory= no-target-directory force interactive no-clobber "
        "no-copy strip-trailing-slashes update verbose context exchange debug help version",
    ),
    "cp": Options.of(
        "St",
        "archive attributes-only backup copy-contents dereference force interactive link "
        "no-dereference no-clobber no-preserve= no-target-directory one-file-system "
        "parents preserve recursive reflink remove-destination sparse= "
        "strip-trailing-slashes suffix= symbolic-link target-directory= update verbose "
        "context keep-directory-symlink debug help version",
    ),
}
"""The file commands acceptEdits allows inside the workspace (with ``sed -i``)."""
