"""dperm's errors as Python exceptions, by SQLSTATE.

Every error the server raises through this package is a DPermError that
keeps the SQLSTATE (``sqlstate``, also ``pgcode``), the message, the DETAIL
and the HINT. A release the budget refuses (SQLSTATE DP001, docs/user-guide.md,
*Errors (SQLSTATEs)*) is a BudgetExhausted: nothing was charged.
"""

__all__ = [
    "DPermError", "BudgetExhausted", "InvalidParameter", "InvalidModel",
    "UndefinedObject", "DuplicateObject", "InsufficientPrivilege",
    "LockNotAvailable", "ObjectNotInPrerequisiteState", "ProgramLimitExceeded",
    "FeatureNotSupported", "InsufficientResources", "DatatypeMismatch",
    "UndefinedColumn", "error_from_psycopg",
]


class DPermError(Exception):
    """An error of the server (or of this package: sqlstate None)."""

    sqlstate_class = None

    def __init__(self, message, sqlstate=None, detail=None, hint=None, cause=None):
        super().__init__(message)
        self.message = message
        self.sqlstate = sqlstate
        self.detail = detail
        self.hint = hint
        self.cause = cause

    @property
    def pgcode(self):
        return self.sqlstate

    def __str__(self):
        text = self.message if self.sqlstate is None else f"{self.sqlstate}: {self.message}"
        if self.detail:
            text += f"\nDETAIL: {self.detail}"
        if self.hint:
            text += f"\nHINT: {self.hint}"
        return text


class BudgetExhausted(DPermError):
    """DP001: the release would overspend a relation's budget (uncharged)."""


class InvalidParameter(DPermError):
    """22023: a bad option, spec or schedule (the message names it)."""


class InvalidModel(DPermError):
    """22P02: a dp_model value whose fields have the wrong kind."""


class UndefinedObject(DPermError):
    """42704: a model name or version the role cannot see."""


class UndefinedColumn(DPermError):
    """42703: a feature spec names a column the relation lacks."""


class DatatypeMismatch(DPermError):
    """42804: a column of the wrong type for its declaration or label."""


class DuplicateObject(DPermError):
    """42710: train_model under a name with another specification."""


class InsufficientPrivilege(DPermError):
    """42501: not the owner, not an analyst, seed without allow_seed, ..."""


class LockNotAvailable(DPermError):
    """55P03: the budget row is held; nothing was charged (retry later)."""


class ObjectNotInPrerequisiteState(DPermError):
    """55000: e.g. a model with no trained version, pg_cron missing."""


class ProgramLimitExceeded(DPermError):
    """54000: past dperm.max_buffer, max_coefficients or max_release_memory."""


class FeatureNotSupported(DPermError):
    """0A000: e.g. streaming with an algorithm that reads single rows."""


class InsufficientResources(DPermError):
    """53000: no ledger writer took the charge in time."""


_BY_SQLSTATE = {
    "DP001": BudgetExhausted,
    "22023": InvalidParameter,
    "22P02": InvalidModel,
    "42704": UndefinedObject,
    "42703": UndefinedColumn,
    "42804": DatatypeMismatch,
    "42710": DuplicateObject,
    "42501": InsufficientPrivilege,
    "55P03": LockNotAvailable,
    "55000": ObjectNotInPrerequisiteState,
    "54000": ProgramLimitExceeded,
    "0A000": FeatureNotSupported,
    "53000": InsufficientResources,
}


def error_from_psycopg(exc):
    """The DPermError (subclass by SQLSTATE) for a psycopg2 error."""
    diag = getattr(exc, "diag", None)
    sqlstate = getattr(exc, "pgcode", None)
    message = getattr(diag, "message_primary", None) if diag is not None else None
    if not message:
        message = (getattr(exc, "pgerror", None) or str(exc)).strip()
    detail = getattr(diag, "message_detail", None) if diag is not None else None
    hint = getattr(diag, "message_hint", None) if diag is not None else None
    cls = _BY_SQLSTATE.get(sqlstate, DPermError)
    return cls(message, sqlstate=sqlstate, detail=detail, hint=hint, cause=exc)
