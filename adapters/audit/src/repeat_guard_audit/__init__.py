"""Audit every transcript on disk: where agents looped, and what the loops cost.

``audit(list_files(paths), settings, engine)`` yields one ``FileAudit`` per transcript, in
listing order, computed in this process, in a process pool or on a Dask cluster; ``total``
adds them up with ``merge_audits``. The renderers turn the results into JSON lines,
CSV, a text summary or a self-contained HTML page.
"""

from ._audit import BATCH_BYTES, BATCH_FILES, DEFAULT_PATHS, audit, batched, list_files, total
from ._engine import ENGINES, LOCAL_SCHEDULERS, EngineError, EngineName, default_jobs, run
from ._fold import fold_file
from ._html import html_page
from ._model import AuditSettings, FileAudit, FileJob
from ._render import (
    CSV_FIELDS,
    clean,
    csv_header,
    csv_session_row,
    csv_totals_row,
    json_session_line,
    json_totals_line,
    text_summary,
)
from ._waste import (
    UNKNOWN_DAY,
    DayTally,
    ProjectTally,
    Run,
    SessionAudit,
    SessionWaste,
    Waste,
    merge_audits,
    merge_waste,
    waste_to_json,
    worst_runs,
    worst_sessions,
)
from ._work import audit_batch, audit_file

__all__ = [
    "BATCH_BYTES",
    "BATCH_FILES",
    "CSV_FIELDS",
    "DEFAULT_PATHS",
    "ENGINES",
    "LOCAL_SCHEDULERS",
    "UNKNOWN_DAY",
    "AuditSettings",
    "DayTally",
    "EngineError",
    "EngineName",
    "FileAudit",
    "FileJob",
    "ProjectTally",
    "Run",
    "SessionAudit",
    "SessionWaste",
    "Waste",
    "audit",
    "audit_batch",
    "audit_file",
    "batched",
    "clean",
    "csv_header",
    "csv_session_row",
    "csv_totals_row",
    "default_jobs",
    "fold_file",
    "html_page",
    "json_session_line",
    "json_totals_line",
    "list_files",
    "merge_audits",
    "merge_waste",
    "run",
    "text_summary",
    "total",
    "waste_to_json",
    "worst_runs",
    "worst_sessions",
]
