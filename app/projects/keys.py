"""API keys: created once and shown once, stored as SHA-256, scoped read and/or write."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from app.models import ApiKey, utcnow

SCOPES = ("read", "write")
KEY_PREFIX = "tlk_"


def hash_key(key: str) -> str:
    """Keys are 256-bit random tokens, so a plain SHA-256 is a safe verifier."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class NewKey:
    """A freshly created key: ``secret`` is never stored and cannot be shown again."""

    id: str
    name: str
    secret: str
    scopes: list[str]


async def create_key(session: AsyncSession, name: str, scopes: list[str]) -> NewKey:
    """Create and store a key; returns the only copy of its secret."""
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown or not scopes:
        raise ValueError(f"scopes must be among {', '.join(SCOPES)}; got {', '.join(unknown) or 'none'}")
    secret = KEY_PREFIX + secrets.token_urlsafe(32)
    row = ApiKey(name=name, prefix=secret[:12], key_hash=hash_key(secret), scopes=sorted(set(scopes)))
    session.add(row)
    await session.flush()
    return NewKey(row.id, name, secret, row.scopes)


async def revoke_key(session: AsyncSession, key_id_or_prefix: str) -> ApiKey | None:
    """Revoke a key by id or prefix; None when there is no such key."""
    query = select(ApiKey).where(
        (col(ApiKey.id) == key_id_or_prefix) | (col(ApiKey.prefix) == key_id_or_prefix)
    )
    row = (await session.execute(query)).scalars().first()
    if row is not None and row.revoked_at is None:
        row.revoked_at = utcnow()
    return row


async def find_key(session: AsyncSession, secret: str) -> ApiKey | None:
    """The live key with this secret, if any."""
    query = select(ApiKey).where(col(ApiKey.key_hash) == hash_key(secret), col(ApiKey.revoked_at).is_(None))
    return (await session.execute(query)).scalars().first()
