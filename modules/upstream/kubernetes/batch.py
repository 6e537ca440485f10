"""batch Jobs and CronJobs (``pkg/apis/batch/validation/validation.go``): cron schedules (robfig/cron
v3 ``ParseStandard``, which Volcano's CronJobs share), concurrency policy, Indexed completions."""
from __future__ import annotations


from modules.semantics.shapes import as_int
from modules.upstream.field import FieldError, invalid, not_supported, required
from modules.core.vocabulary.go import atoi, go_quote, is_duration
from .values import as_str


# --- cron schedules (robfig/cron v3 ParseStandard: batch CronJobs and Volcano's CronJobs) ----------

_CRON_DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_CRON_FIELDS = ((0, 59, {}), (0, 23, {}), (1, 31, {}),
                (1, 12, {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}),
                (0, 6, {d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())}))


def _must_parse_int(expr: str) -> tuple[int | None, str | None]:
    """robfig/cron's ``mustParseInt``: ``strconv.Atoi``, then no negative number."""
    num = atoi(expr)
    if num is None:
        return None, f"failed to parse int from {expr}: strconv.Atoi: parsing {go_quote(expr)}: invalid syntax"
    if num < 0:
        return None, f"negative number ({num}) not allowed: {expr}"
    return num, None


def _cron_field_error(text: str, low: int, high: int, names: dict) -> str | None:
    for part in text.split(","):
        rng, slash, step = part.partition("/")
        if slash:
            num, error = _must_parse_int(step)
            if error or num == 0:
                return error or f"step of range should be a positive number: {part}"
        if rng in ("*", "?"):
            continue
        start, dash, end = rng.partition("-")
        values = []
        for v in (start, end) if dash else (start,):
            named = names.get(v.lower())
            num, error = (named, None) if named is not None else _must_parse_int(v)
            if error:
                return error
            values.append(num)
        if values[0] < low:
            return f"beginning of range ({values[0]}) below minimum ({low}): {part}"
        if values[-1] > high:
            return f"end of range ({values[-1]}) above maximum ({high}): {part}"
        if dash and values[0] > values[1]:
            return f"beginning of range ({values[0]}) beyond end of range ({values[1]}): {part}"
    return None


def cron_schedule_error(schedule: str) -> str | None:
    """Why robfig/cron ``ParseStandard`` refuses ``schedule`` (its error text), or None: five fields
    (minute hour day-of-month month day-of-week) with lists, ranges, steps and month/day names, or a
    descriptor (``@daily``, ``@every 1h30m``)."""
    text = schedule.strip()
    if text.startswith("@"):
        if text.startswith("@every "):
            duration = text[len("@every "):].strip()
            return None if is_duration(duration) else f"failed to parse duration {text}: time: invalid " \
                                                               f"duration {go_quote(duration)}"
        return None if text in _CRON_DESCRIPTORS else f"unrecognized descriptor: {text}"
    fields = text.split()
    if len(fields) != 5:
        return f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]"
    for f, rule in zip(fields, _CRON_FIELDS):
        error = _cron_field_error(f, *rule)
        if error:
            return error
    return None


def validate_cronjob_spec(spec: dict) -> list[FieldError]:
    """ValidateCronJobSpec on create: the schedule parses, no TZ inside it (timeZone is the field for
    that), a known concurrencyPolicy (defaulted to Allow)."""
    out: list[FieldError] = []
    schedule = as_str(spec.get("schedule")) or ""
    if not schedule:
        out.append(required("spec.schedule"))
    else:
        error = cron_schedule_error(schedule)
        if error:
            out.append(invalid("spec.schedule", schedule, error))
        if "TZ" in schedule:
            out.append(invalid("spec.schedule", schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone "
                                                           "field instead"))
    policy = spec.get("concurrencyPolicy") or "Allow"
    if policy not in ("Allow", "Forbid", "Replace"):
        out.append(not_supported("spec.concurrencyPolicy", policy, ("Allow", "Forbid", "Replace")))
    return out


MAX_INDEXED_PARALLELISM = 100000


def validate_indexed(spec: dict) -> list[FieldError]:
    """validateJobSpec: a known completionMode; an Indexed Job needs completions and at most 100000
    parallel pods."""
    mode = spec.get("completionMode")
    if mode is None or mode == "NonIndexed":
        return []
    if mode != "Indexed":
        return [not_supported("spec.completionMode", mode, ("NonIndexed", "Indexed"))]
    out: list[FieldError] = []
    if spec.get("completions") is None:
        out.append(required("spec.completions", "when completion mode is Indexed"))
    parallelism = as_int(spec.get("parallelism"))
    if parallelism is not None and parallelism > MAX_INDEXED_PARALLELISM:
        out.append(invalid("spec.parallelism", parallelism, f"must be less than or equal to {MAX_INDEXED_PARALLELISM} "
                                                             "when completion mode is Indexed"))
    return out
