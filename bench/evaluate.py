"""``make eval``: the guard's decisions on the labelled corpus, for the defaults and each option.

Reads every labelled file of ``tests/data/eval`` through the project's own readers and the one
replay (``steps(items, config)``), under each configuration below, and prints, per
configuration: reminders on genuine loops and retries (recall), reminders and refusals on
calls that made progress (false positives), reminders on calls no label names, and, per
labelled loop, at which of its calls the first reminder came. The labels and the corpus's
provenance are in ``tests/data/eval/README.md``; the scoring is ``bench/scoring.py``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from bench.scoring import CAUGHT_BY, Label, Score, agent_calls, parse_labels, score_file
from repeat_guard import HOST_PRESETS, GuardConfig, parse_config
from repeat_guard_transcripts import READERS, sniff_format, steps

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "eval"

SHELLS = ("Bash", "exec_command", "run_shell_command", "bash")
"""The shell tools of Claude Code, Codex, Gemini CLI and Copilot CLI, through which agents also poll
(``sleep 2 && tail``): "shells" in the configurations' names."""
SHELL_POLICY = {shell: {"progress": "result"} for shell in SHELLS}

CONFIGS: dict[str, Mapping[str, object]] = {
    "defaults": {},
    "thresholds=[2,4,8]": {"thresholds": [2, 4, 8]},
    'thresholds=[2,4,8], progress="result"': {"thresholds": [2, 4, 8], "progress": "result"},
    'progress="result"': {"progress": "result"},
    'progress="result", errorsAreProgress=true': {"progress": "result", "errorsAreProgress": True},
    "cyclePeriod=4": {"cyclePeriod": 4},
    'cyclePeriod=4, progress="result"': {"cyclePeriod": 4, "progress": "result"},
    "cyclePeriod=4, cycleDenyAt=3": {"cyclePeriod": 4, "cycleDenyAt": 3},
    'budgets={"*"=20}': {"budgets": {"*": 20}},
    'budgets={"*"=20}, budgetScope="session"': {"budgets": {"*": 20}, "budgetScope": "session"},
    'tools={shells={progress="result"}}': {"tools": SHELL_POLICY},
    "retryWindow=12": {"retryWindow": 12},
    "retryWindow=12, retryThresholds=[2,3]": {"retryWindow": 12, "retryThresholds": [2, 3]},
    'retryWindow=12, progress="result"': {"retryWindow": 12, "progress": "result"},
    "denyAt=4": {"denyAt": 4},
    'denyAt=4, progress="result"': {"denyAt": 4, "progress": "result"},
}
"""Each option as a user would write it in ``.repeat-guard.toml``, parsed by the core."""

PRESETS: dict[str, Mapping[str, object]] = {
    f'preset="{host}"': {"preset": host} for host, tools in HOST_PRESETS.items() if tools
}
"""Each host's preset that names polling tools (``repeat-guard install HOST`` sets it; the
others add nothing to the defaults)."""


NOT_DATA = ("README.md", "labels.txt")


def corpus_files() -> list[str]:
    """Every transcript of the corpus, labelled or not, as paths under it."""
    paths = (path for path in CORPUS.rglob("*") if path.is_file() and path.name not in NOT_DATA)
    return sorted(path.relative_to(CORPUS).as_posix() for path in paths)


def score_corpus(files: list[str], labels: list[Label], config: GuardConfig) -> Score:
    """Replay each file under ``config`` and score it against its labels (a file without
    labels counts its reminders as unlabelled)."""
    total = Score()
    for file in files:
        path = CORPUS / file
        reader = READERS[sniff_format(str(path)) or "unknown"]
        with path.open("rb") as stream:
            items = reader.read(stream, file)
            calls = agent_calls(steps(items, config))
        total.add(score_file([label for label in labels if label.file == file], calls))
    return total


HOST_FOLDERS = {
    "claude-code": "claude-code",
    "codex": "codex",
    "copilot": "copilot-cli",
    "gemini": "gemini-cli",
    "qwen-code": "qwen-code",
}
"""The corpus folder of each host whose preset names polling tools and whose files are here."""


def host_presets(files: list[str], labels: list[Label]) -> list[list[str]]:
    """Each host's preset scored on that host's own files only, under the defaults and under
    the preset: progress labels reminded (reminders), and loops of 3 or more calls reminded by
    call ``CAUGHT_BY``."""
    rows = [["host", "files", "defaults: progress", "preset: progress", "preset: 3+ loops"]]
    for host, folder in HOST_FOLDERS.items():
        own = [file for file in files if file.startswith(folder + "/")]
        default, preset = (
            score_corpus(own, labels, parse_config(raw).unwrap()) for raw in ({}, {"preset": host})
        )
        caught, long = preset.caught_by()
        row = [host, str(len(own)), _ratio(default, "progress"), _ratio(preset, "progress")]
        rows.append([*row, f"{caught}/{long}"])
    return rows


def _ratio(score: Score, kind: str) -> str:
    """Labels reminded of all labels of ``kind``, and how many reminders they got."""
    return f"{score.reminded[kind]}/{score.labels[kind]} ({score.reminders[kind]})"


def _row(name: str, score: Score) -> list[str]:
    caught, long = score.caught_by()
    refused = f"{score.refused['loop'] + score.refused['retry']}/{score.refused['progress']}"
    return [
        name,
        _ratio(score, "loop"),
        f"{caught}/{long}",
        _ratio(score, "retry"),
        _ratio(score, "progress"),
        refused,
        str(score.other),
    ]


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def main() -> None:
    """Print the figures for every configuration."""
    labels, errors = parse_labels((CORPUS / "labels.txt").read_text(encoding="utf-8"))
    for error in errors:
        print(error)
    files = corpus_files()
    formats = Counter(sniff_format(str(CORPUS / file)) for file in files)
    kinds = Counter(label.kind for label in labels)
    print(
        f"Corpus: {len(files)} files ("
        + ", ".join(f"{name} {count}" for name, count in sorted(formats.items(), key=str))
        + f"); {kinds['loop']} loops, {kinds['retry']} retries, {kinds['progress']} progress"
    )
    scores = {
        name: score_corpus(files, labels, parse_config(raw).unwrap())
        for name, raw in {**CONFIGS, **PRESETS}.items()
    }
    header = [
        "config",
        "loops reminded (reminders)",
        f"3+ by call {CAUGHT_BY}",
        "retries reminded (reminders)",
        "progress reminded (reminders)",
        "refused loop+retry/progress",
        "unlabelled reminders",
    ]
    print()
    print(_table([header] + [_row(name, score) for name, score in scores.items()]))
    print()
    print("First reminder at the k-th call of each labelled loop or retry (- none):")
    names = list(scores)
    rows = [["label", *[str(n) for n in range(1, len(names) + 1)]]]
    for label in labels:
        if label.kind != "progress":
            cells = [str(scores[name].first.get(label, 0) or "-") for name in names]
            calls = ",".join(map(str, label.calls))
            rows.append([f"{label.kind} {label.file} {label.session or ''} {calls}", *cells])
    print(_table(rows))
    print("columns: " + "; ".join(f"{n} {name}" for n, name in enumerate(names, 1)))
    print()
    print("Each host's preset on its own files:")
    print(_table(host_presets(files, labels)))
    mismatches = sorted({m for score in scores.values() for m in score.mismatches})
    for mismatch in mismatches:
        print("label mismatch:", mismatch)


if __name__ == "__main__":
    main()
