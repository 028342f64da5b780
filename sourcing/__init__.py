"""Sourcing: suppliers, offers, tariffs, FX rates, purchase tracking and the timeline."""
