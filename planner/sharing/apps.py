"""Client review and documents: revisions, share links, comments, approvals, checklist, PDFs."""

from django.apps import AppConfig


class SharingConfig(AppConfig):
    name = "planner.sharing"
    label = "sharing"
    verbose_name = "Client review and documents"
