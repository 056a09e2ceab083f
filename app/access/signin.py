"""Signing in with an API key: the key's hash, and whether it is live (not revoked, not expired).
Making and managing keys is in ``app.projects``."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from app.models import ApiKey, utcnow

# A key's last use is written at most this often: a busy key costs no write per request.
LAST_USED_EVERY = timedelta(seconds=60)


def hash_key(key: str) -> str:
    """Keys are 256-bit random tokens, so a plain SHA-256 is a safe verifier."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def is_live(key: ApiKey, now: datetime | None = None) -> bool:
    """Neither revoked nor expired."""
    now = now or utcnow()
    return key.revoked_at is None and (key.expires_at is None or key.expires_at > now)


async def find_key(session: AsyncSession, secret: str) -> ApiKey | None:
    """The live key with this secret, if any; its last use is recorded (at most once a minute)."""
    query = select(ApiKey).where(col(ApiKey.key_hash) == hash_key(secret), col(ApiKey.revoked_at).is_(None))
    key = (await session.execute(query)).scalars().first()
    now = utcnow()
    if key is None or not is_live(key, now):
        return None
    if key.last_used_at is None or now - key.last_used_at >= LAST_USED_EVERY:
        key.last_used_at = now
        await session.commit()
    return key
