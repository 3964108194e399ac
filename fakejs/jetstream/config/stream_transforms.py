"""A stream's ``subject_transform`` and ``republish``: nats-server's checks and defaults.

:func:`check` is the part of ``checkStreamCfg`` that validates both (run
for creates and updates, after the subjects); :func:`prepare_update` is
what ``stream.update`` adds when it builds the republish transform of an
updated stream (an empty destination means ``>``).  The transforms
themselves are :class:`fakejs.core.subject_transform.SubjectTransform`.
"""

from __future__ import annotations

from fakejs.core.subject_transform import FWC, SubjectTransform, TransformError, validate_mapping
from fakejs.core.subjects import is_valid_subject, overlap
from fakejs.jetstream.config.stream import StreamConfig
from fakejs.jetstream.errors import api_error


def check(cfg: StreamConfig, pedantic: bool) -> None:
    """Validate the input transform, then default and validate the republish (``cfg`` is changed in place)."""
    transform = cfg["subject_transform"]
    if transform is not None:
        src, dest = transform.get("src", ""), transform.get("dest", "")
        if src and not is_valid_subject(src):
            raise api_error("JSStreamTransformInvalidSource", err=f"invalid subject {src}")
        try:
            validate_mapping(src, dest)
        except TransformError as exc:
            raise api_error("JSStreamTransformInvalidDestination", err=str(exc)) from None
    republish = cfg["republish"]
    if republish is None:
        return
    republish = cfg["republish"] = dict(republish)
    if not republish.get("src"):
        if pedantic:
            raise api_error("JSPedanticErrF", err="republish source can not be empty")
        republish["src"] = FWC
    src, dest = republish["src"], republish.get("dest", "")
    subjects = cfg["subjects"]
    if (
        src == FWC
        and dest == FWC
        and transform is not None
        and len(subjects) == 1
        and transform.get("src", "") == subjects[0]
    ):
        # Republishing everything would be a cycle; with a transform of the only subject it means
        # "republish under the transformed subject".
        if pedantic:
            raise api_error("JSPedanticErrF", err="implicit republish based on subject transform")
        src = dest = republish["src"] = republish["dest"] = transform.get("dest", "")
    if any(overlap(dest, subject) for subject in subjects):
        raise api_error("JSStreamInvalidConfigF", err="stream configuration for republish destination forms a cycle")
    try:
        SubjectTransform.parse(src, dest)
    except TransformError:
        raise api_error(
            "JSStreamInvalidConfigF",
            err=f"stream configuration for republish with transform from '{src}' to '{dest}' not valid",
        ) from None


def prepare_update(cfg: StreamConfig) -> None:
    """An updated stream's republish: empty source and destination mean ``>`` (kept in the config)."""
    republish = cfg["republish"]
    if republish is None:
        return
    republish = cfg["republish"] = dict(republish)
    republish["src"] = republish.get("src") or FWC
    republish["dest"] = republish.get("dest") or FWC
    try:
        SubjectTransform.parse(republish["src"], republish["dest"])
    except TransformError as exc:
        raise api_error(
            "JSStreamUpdateErrF",
            err=f"stream configuration for republish from '{republish['src']}' to '{republish['dest']}': {exc}",
        ) from None
