from django.apps import AppConfig


class SourcingConfig(AppConfig):
    name = "sourcing"
    verbose_name = "Sourcing"
