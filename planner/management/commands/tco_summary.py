"""Print a plan's latest finished TCO run: currency, the dated rate and each option's figures.

manage.py tco_summary <plan id>
"""

from django.core.management.base import BaseCommand, CommandError

from planner.facility.models import TcoRun, TcoStatus


class Command(BaseCommand):
    help = "Print a plan's latest finished TCO run (NPV, break-even, unit costs per option)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("plan_id", type=int)

    def handle(self, *args, plan_id: int, **options) -> None:
        run = (
            TcoRun.objects.filter(plan_id=plan_id, status=TcoStatus.SUCCEEDED)
            .order_by("-finished_at")
            .first()
        )
        if run is None:
            raise CommandError(f"Plan {plan_id} has no finished TCO run.")
        results = run.results
        fx = results.get("fx") or {}
        currency = results.get("currency", "USD")
        rate = f" at 1 USD = {fx['rate']} {currency} ({fx['date']})" if fx.get("date") else ""
        self.stdout.write(f"TCO run {run.pk} of plan {plan_id}: amounts in {currency}{rate}")
        for o in results["options"]:
            self.stdout.write(
                f"  {o['label']}: NPV {o['npv_amount']} {currency}, break-even month "
                f"{o['break_even_month'] or '—'}, per request {o['cost_per_request_amount']} {currency}, "
                f"per M output tokens {o['cost_per_million_output_tokens_amount']} {currency}"
            )
            for w in o.get("workloads") or ():
                self.stdout.write(
                    f"    {w['name']}: per request {w['cost_per_request_amount']} {currency}, per M "
                    f"tokens input {w['input_amount_per_million_tokens'] or '—'} / output "
                    f"{w['output_amount_per_million_tokens'] or '—'} {currency}"
                )
            for note in o.get("notes") or ():
                self.stdout.write(f"    note: {note}")
            for part in o.get("sites") or ():
                self.stdout.write(
                    f"    {part['label']}: {part['servers']} servers, NPV {part['npv_amount']} {currency}"
                )
        for bar in results.get("tornado") or ():
            self.stdout.write(
                f"  tornado {bar['driver']}: {bar['low_input']:g}–{bar['high_input']:g} "
                f"{bar['unit']} → NPV saved {bar['low_value_amount']}–{bar['high_value_amount']} "
                f"{currency}"
            )
