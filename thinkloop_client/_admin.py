"""Projects, their keys and the audit log: one method group for each client. An ``operator`` key
makes projects, sets their caps and manages every project's keys; a project's ``admin`` key manages
its own project's keys and reads its own audit log (another project's answer NotFound)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from datetime import datetime
from typing import Unpack

from thinkloop_client import _calls as calls
from thinkloop_client._base import AsyncBase, SyncBase
from thinkloop_client._calls import AuditFilters, ProjectCaps
from thinkloop_client.models import AuditEntry, Key, Project

DATA_SCOPES = ("read", "write")


class AdminMethods(SyncBase):
    """Make projects and keys, revoke keys, read the audit log."""

    def create_project(self, name: str, **caps: Unpack[ProjectCaps]) -> Project:
        """Make a project, with its own daily caps (``daily_tokens``, ``daily_cost_usd``) if given
        (409 if the name is taken)."""
        return self._send(calls.create_project(name, **caps))

    def update_project(self, project_id: str, **caps: Unpack[ProjectCaps]) -> Project:
        """Change a project's own daily caps: only those given change; None sets one back to the
        server's global setting."""
        return self._send(calls.update_project(project_id, **caps))

    def list_projects(self) -> list[Project]:
        """Every project."""
        return self._send(calls.list_projects())

    def create_key(
        self,
        project_id: str,
        name: str,
        *,
        scopes: Sequence[str] = DATA_SCOPES,
        expires_at: datetime | None = None,
    ) -> Key:
        """Make a key of the project; its ``secret`` is in this answer only. ``expires_at`` needs
        a timezone."""
        return self._send(calls.create_key(project_id, name, scopes=scopes, expires_at=expires_at))

    def list_keys(self, project_id: str) -> list[Key]:
        """The project's keys (never a secret)."""
        return self._send(calls.list_keys(project_id))

    def revoke_key(self, key_id: str) -> Key:
        """Revoke a key: it answers 401 from now on."""
        return self._send(calls.revoke_key(key_id))

    def iter_audit(self, **filters: Unpack[AuditFilters]) -> Iterator[AuditEntry]:
        """The audit log, newest first, page after page. Filters: project_id, action, target_id,
        limit (per page)."""
        return self._pages(calls.list_audit(**filters), lambda c: calls.list_audit(c, **filters))


class AsyncAdminMethods(AsyncBase):
    """The same as :class:`AdminMethods`, awaited."""

    async def create_project(self, name: str, **caps: Unpack[ProjectCaps]) -> Project:
        """See :meth:`Client.create_project`."""
        return await self._send(calls.create_project(name, **caps))

    async def update_project(self, project_id: str, **caps: Unpack[ProjectCaps]) -> Project:
        """See :meth:`Client.update_project`."""
        return await self._send(calls.update_project(project_id, **caps))

    async def list_projects(self) -> list[Project]:
        """See :meth:`Client.list_projects`."""
        return await self._send(calls.list_projects())

    async def create_key(
        self,
        project_id: str,
        name: str,
        *,
        scopes: Sequence[str] = DATA_SCOPES,
        expires_at: datetime | None = None,
    ) -> Key:
        """See :meth:`Client.create_key`."""
        return await self._send(calls.create_key(project_id, name, scopes=scopes, expires_at=expires_at))

    async def list_keys(self, project_id: str) -> list[Key]:
        """See :meth:`Client.list_keys`."""
        return await self._send(calls.list_keys(project_id))

    async def revoke_key(self, key_id: str) -> Key:
        """See :meth:`Client.revoke_key`."""
        return await self._send(calls.revoke_key(key_id))

    def iter_audit(self, **filters: Unpack[AuditFilters]) -> AsyncIterator[AuditEntry]:
        """See :meth:`Client.iter_audit`."""
        return self._pages(calls.list_audit(**filters), lambda c: calls.list_audit(c, **filters))
