"""Seed tariff rules for the hardware an inference build imports, with their sources.

Contract: :data:`DEFAULT_TARIFF_RULES` is a tuple of :class:`~planner.engine.landed_cost.TariffRule`
for destinations US, DE/FR/NL/IE (EU), GB (UK), JP, SG and IN and the HS lines of a GPU build:

* 8471.50 complete servers, 8471.80 ADP units, 8473.30 boards/parts/GPU modules,
* 8517.62 switches and NICs, 8542.31 processors (US only, for Section 301 on semiconductors),
* 8544.42 cables fitted with connectors, 8537.10 rack PDUs (boards with several sockets/breakers).

Figures come from ``shared/reference/facility_tco_sourcing.md`` (sections C1-C5, D18-D21;
stored sources up to mid-2026) unless the ``source`` says otherwise; tertiary aggregator figures
say so. They are dated data for the catalog's tariff table, not constants: maintainers edit them
in the admin, and every landed-cost quote shows the rule's source.

Deliberately absent (so the engine reports "no rule — duty unknown" instead of a guessed 0):
India 8473.30 and 8517.62 (India applied 7.5-20 % to some ICT goods, WTO DS582 — verify per
line), Japan and UK rules for cables and PDUs, 8536 parts, and US tariffs after 24 Jul 2026
(not in the store). IEEPA reciprocal/fentanyl duties are not seeded: the Supreme Court ended
them for entries from 24 Feb 2026 (reference C3 item 5); quotes for earlier entries need them
added by hand.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from planner.engine.landed_cost import ExtraMeasure, TariffRule

__all__ = ["DEFAULT_TARIFF_RULES", "EU_VAT_PCT", "default_tariff_rules"]

D = Decimal

# --- sources (one string per fact; reference section in brackets) ---------------------------
SRC_ITA = (
    "WTO ITA: MFN 0 % on computers, parts, semiconductors and telecom equipment "
    "(https://ustr.gov/issue-areas/industry-manufacturing/industry-initiatives/information-technology); "
    "US 'Free' confirmed by CBP NY N360000 (8471.50.0150, 2026) and NY N338976 (8473.30.1180) "
    "[reference C1, C2, D18]"
)
SRC_EU_VAT = (
    "EU standard VAT DE 19 / FR 20 / NL 21 / IE 23 % on customs value + duty (+ transport to first "
    "destination) (https://eclear.com/knowledge/eu-vat-rates/) [reference C4, D21]"
)
SRC_UK_VAT = "UK VAT 20 % (https://amavat.eu/resources/current-intrastat-thresholds-and-vat-rates-in-europe/) [reference C4]"
SRC_JP_VAT = (
    "Japan consumption tax 10 % (7.8 % national + 2.2 % local) on CIF + duty "
    "(Japan Customs FAQ 1111, https://www.customs.go.jp/english/c-answer_e/imtsukan/1111_e.htm) "
    "[reference C4]"
)
SRC_SG_GST = (
    "Singapore GST 9 % from 1 Jan 2024, 8 % in 2023 "
    "(https://www.gov.sg/explainers/what-you-need-to-know-the-gst-rate-from-1-january-2024) "
    "[reference C4]; customs duty only on liquor, tobacco, motor vehicles and petroleum "
    "(Singapore Customs via bbs.sgcn.org, tertiary)"
)
SRC_IN = (
    "India 8471: BCD 0 % + IGST 18 %, SWS 10 % of BCD, AV = CIF + 1 % "
    "(https://treayo.com/en/hs/india/84718000; https://paytm.com/faqs/tax/how-custom-duty-is-calculated-in-india) "
    "[reference C2, C4; tertiary — verify per line]"
)
SRC_301_LIST3 = (
    "Section 301 List 3, 25 % on China origin from 10 May 2019 (https://ilogixchb.com/section301); "
    "8473.30.1180 GPU boards report 9903.88.03 (CBP NY N338976) [reference C3 item 1, D19]"
)
SRC_301_UNCONFIRMED = (
    "Section 301 List 3, 25 % on China origin from 10 May 2019 (https://ilogixchb.com/section301); "
    "whether this HS line is on a 301 list is NOT confirmed by a primary source in the store "
    "(reference C3 item 1 and F: 'verify per HTS line in the USTR lists') — the duty is shown as "
    "unknown until a maintainer confirms or removes the measure [reference C3, F]"
)
SRC_IEEPA_FENTANYL = (
    "IEEPA 'fentanyl' duty on China origin, HTS 9903.01.24: 10 % from EO 14195 (Feb 2025, "
    "effective 4 Feb 2025), 20 % under EO 14228 from 4 Mar 2025 (U.S. note 2(u)), 10 % for "
    "entries from 10 Nov 2025 (EO of 4 Nov 2025: https://www.strtrade.com/trade-news-resources/"
    "str-trade-report/trade-report/november/tariff-changes-for-imports-from-china-made-official ; "
    "https://gohnm.com/hnm-informational-notice-us-china-tariff-trade-deal); still applied to the "
    "electronics excluded from the reciprocal duty (https://jdsupra.com/legalnews/trump-exempts-"
    "certain-electronics-from-2626789); ended for entries from 24 Feb 2026 by Learning Resources "
    "v. Trump (https://www.joneswalker.com/en/insights/blogs/perspectives/u-s-supreme-court-holds-"
    "ieepa-does-not-authorize-presidential-tariffs.html?id=102mjzb) [reference C3 items 3 and 5]"
)
SRC_IEEPA_RECIPROCAL_EXCLUDED = (
    "IEEPA reciprocal duty (EO 14257, 2 Apr 2025): 8471, 8473.30, 8486, 8517.62, 8542 excluded "
    "by the 11 Apr 2025 memorandum / CBP CSMS #64724565, declare 9903.01.32 (https://www.troutman."
    "com/insights/white-house-releases-list-of-products-excluded-from-reciprocal-tariffs/ ; "
    "https://info.expeditors.com/newsflash/cbp-publishes-updated-guidance-on-goods-excluded-from-"
    "reciprocal-tariffs); ended for entries from 24 Feb 2026 (Learning Resources v. Trump) "
    "[reference C3 items 3 and 5]"
)
SRC_IEEPA_RECIPROCAL_CN = (
    "IEEPA reciprocal duty on China origin (EO 14257): 10 % baseline from 5 Apr 2025, 84 % from "
    "9 Apr, 125 % from 10 Apr, 10 % from 14 May 2025, kept at 10 % to 10 Nov 2026 by the EO of "
    "4 Nov 2025 (https://www.mondaq.com/unitedstates/international-trade-investment/1702374/) ; "
    "ended for entries from 24 Feb 2026 (Learning Resources v. Trump, reference C3 item 5). Other "
    "origins' country rates are not seeded: add them for 2025 entries of non-excluded goods"
)
SRC_301_SEMIS = (
    "Section 301 four-year review: China-origin semiconductors 8541/8542 25 % → 50 % from "
    "1 Jan 2025 (https://lighthilltrade.com/section-301-tariffs-key-updates) [reference C3 item 2, D19]"
)
SRC_232 = (
    "Section 232 proclamation of 14 Jan 2026: 25 % on a narrow set of advanced computing chips "
    "and derivatives in 8471.50/8471.80/8473.30 from 15 Jan 2026; end-use exemptions incl. U.S. "
    "data centers (9903.79.01-.09) (https://www.whitecase.com/insight-alert/president-trump-"
    "orders-narrowly-targeted-25-section-232-tariff-certain-advanced) [reference C3 item 4, D19]"
)
SRC_122 = (
    "Section 122 surcharge 10 % (15 % announced) on most imports 24 Feb - 24 Jul 2026, "
    "HTS 9903.03.01; certain electronics (8471, 8473.30, 8517.62 ...) exempt; no stacking on "
    "Section 232 (https://www.thompsonhinesmartrade.com/2026/02/) [reference C3 item 6, D19]"
)
SRC_US_CABLE = (
    "HTSUS 8544.42.90 general 2.6 %, 8544.42.20 (telecommunications) Free "
    "(USITC HTS via HSRates https://custom-tariffs-seo.pages.dev/en/codes/8544-42-other-electric-"
    "conductors-for-a-voltage-not-exceeding-1-000-v, accessed 2026-02-22; etoolsage.com) [tertiary]"
)
SRC_US_CABLE_301 = (
    "China origin 8544.42.90: additional 25 % (htshub.com, fiowind.com) [tertiary; list and start "
    "date not verified — dated here from List 3's 25 % step, verify in the USTR lists]"
)
SRC_US_PDU = (
    "HTSUS 8537.10.91 (boards for distribution of electricity ≤ 1,000 V, other) general 2.7 % "
    "(https://portoria.app/hts/8537109170; CBP NY D89647 for 8537.10.9070) [tertiary/primary]"
)
SRC_US_PDU_301 = (
    "China origin 8537.10.91: 'the duty provided in the applicable subheading + 25 %' "
    "(https://htshub.com/us-hs/search/8537) [tertiary; start date not verified — dated from "
    "List 3's 25 % step, verify in the USTR lists]"
)
SRC_EU_CABLE = (
    "EU TARIC 8544 42 90 third-country duty 3.3 %, 8544 42 10 (telecommunications) 0 % "
    "(DG TAXUD TARIC via HSRates https://custom-tariffs-seo.pages.dev/en/codes/8544-42-other-"
    "electric-conductors-for-a-voltage-not-exceeding-1-000-v, accessed 2026-02-22) [tertiary]"
)
SRC_EU_PDU = (
    "EU: rack power distribution unit classified in CN 8537 10 by Implementing Regulation (EU) "
    "2016/1958 (OJ L 301, 9.11.2016); third-country duty 2.1 % "
    "(https://zolltool.com/zoll/tarifentscheide/stromverteilereinheit) [secondary]"
)
SRC_UK_CABLE = (
    "UK Global Tariff 8544 42 90 2.0 %, 8544 42 10 0 % (UK Trade Tariff via HSRates, accessed "
    "2026-02-22) [tertiary]"
)
SRC_FIBRE = (
    "HS 8544.70 optical fibre cables: EU TARIC 8544 70 00 0.00 %, UK 0.00 %, US 8544.70.00.00 "
    "Free (HSRates from DG TAXUD TARIC, HMRC and USITC HTS, accessed 2026-02-22, https://custom-"
    "tariffs-seo.pages.dev/en/codes/8544-70-optical-fibre-cables [tertiary]; US 'Free' confirmed "
    "by CBP NY N324842 and NY N344044 [primary]). Caution: the EU also levies anti-dumping 88 % + "
    "countervailing 10.3 % on CN-origin single-mode cables, excluding cables whose fibres are all "
    "fitted with connectors (< 500 m) (https://celna24.pl/customs-tariff/85447000) — not seeded"
)
SRC_RACK = (
    "HS 9403.20 other metal furniture (racks): EU TARIC 9403 20 80 0.00 %, UK 0.00 % (HSRates, "
    "accessed 2026-02-22, https://custom-tariffs-seo.pages.dev/en/codes/9403-20-other-metal-"
    "furniture [tertiary]); US 9403.20.00 general Free (https://dripcapital.com/hts-code/94/03/20 "
    "[tertiary]). Not an ITA line. CBP classified empty server cabinet racks in 9403.10.0040, also "
    "Free (ZT Group ruling, 2019) — check the rack's classification"
)
SRC_US_RACK_301 = (
    "China origin 9403.20.00: 'the duty provided in the applicable subheading + 25%' "
    "(https://htshub.com/us-hs/search/9403, 2025 HTS) [tertiary; dated from List 3's 25 % step "
    "(https://ilogixchb.com/section301), verify in the USTR lists]"
)
SRC_UK_ITA = (
    "UK Global Tariff keeps ITA goods at 0 % [reference C2 says 'most others'; verify in the UK "
    "Trade Tariff]"
)

EU_VAT_PCT: dict[str, Decimal] = {"DE": D(19), "FR": D(20), "NL": D(21), "IE": D(23)}

# HS lines covered by the ITA (0 % MFN), with their description.
_ITA_LINES = (
    ("847150", "Processing units (complete servers)"),
    ("847170", "Storage units of ADP machines (drives, arrays)"),
    ("847180", "Units of ADP machines"),
    ("847330", "Parts of ADP machines (boards, GPU modules)"),
    ("851762", "Switching and routing apparatus, NICs"),
    ("854231", "Processors and controllers (ICs)"),
)

SECTION_232 = "Section 232 advanced computing chips (9903.79.01)"
SECTION_122 = "Section 122 surcharge (9903.03.01)"
SECTION_301_LIST3 = "Section 301 List 3 (9903.88.03)"
SECTION_301_SEMIS = "Section 301 semiconductors (2025 review)"
IEEPA_FENTANYL = "IEEPA fentanyl duty, China (9903.01.24)"
IEEPA_RECIPROCAL = "IEEPA reciprocal duty (EO 14257)"
IEEPA_RECIPROCAL_EXCLUDED = "IEEPA reciprocal duty — excluded (9903.01.32)"
IEEPA_END = date(2026, 2, 23)  # last entry day: Learning Resources v. Trump (reference C3 item 5)

# Dated IEEPA measures on China origin: (pct, first day, last day).
_FENTANYL_STEPS = (
    (D(10), date(2025, 2, 4), date(2025, 3, 3)),
    (D(20), date(2025, 3, 4), date(2025, 11, 9)),
    (D(10), date(2025, 11, 10), IEEPA_END),
)
_RECIPROCAL_CN_STEPS = (
    (D(10), date(2025, 4, 5), date(2025, 4, 8)),
    (D(84), date(2025, 4, 9), date(2025, 4, 9)),
    (D(125), date(2025, 4, 10), date(2025, 5, 13)),
    (D(10), date(2025, 5, 14), IEEPA_END),
)


def _ieepa(*, excluded_from_reciprocal: bool) -> tuple[ExtraMeasure, ...]:
    """The 2025 IEEPA measures for one US line, each step dated; they stack on MFN and 301."""
    fentanyl = tuple(
        ExtraMeasure(IEEPA_FENTANYL, ("CN",), pct, start, end, source=SRC_IEEPA_FENTANYL)
        for pct, start, end in _FENTANYL_STEPS
    )
    if excluded_from_reciprocal:
        reciprocal = (
            ExtraMeasure(
                IEEPA_RECIPROCAL_EXCLUDED, (), D(0), date(2025, 4, 5), IEEPA_END,
                source=SRC_IEEPA_RECIPROCAL_EXCLUDED,
            ),
        )  # fmt: skip
    else:
        reciprocal = tuple(
            ExtraMeasure(IEEPA_RECIPROCAL, ("CN",), pct, start, end, source=SRC_IEEPA_RECIPROCAL_CN)
            for pct, start, end in _RECIPROCAL_CN_STEPS
        )
    return fentanyl + reciprocal


def _us_rules() -> list[TariffRule]:
    s232 = ExtraMeasure(
        SECTION_232,
        (),
        D(25),
        date(2026, 1, 15),
        condition="only covered advanced-computing chips; U.S. data-center end use is exempt",
        source=SRC_232,
    )
    s122 = ExtraMeasure(
        SECTION_122,
        (),
        D(10),
        date(2026, 2, 24),
        date(2026, 7, 24),
        stacks=False,
        not_stacked_on=(SECTION_232,),
        source=SRC_122,
    )
    list3 = ExtraMeasure(SECTION_301_LIST3, ("CN",), D(25), date(2019, 5, 10), source=SRC_301_LIST3)
    list3_cable = ExtraMeasure(
        SECTION_301_LIST3, ("CN",), D(25), date(2019, 5, 10), source=SRC_US_CABLE_301
    )
    list3_pdu = ExtraMeasure(
        SECTION_301_LIST3, ("CN",), D(25), date(2019, 5, 10), source=SRC_US_PDU_301
    )
    semis = ExtraMeasure(SECTION_301_SEMIS, ("CN",), D(50), date(2025, 1, 1), source=SRC_301_SEMIS)
    # 301 coverage not confirmed in the store (reference C3 item 1, F): duty "unknown — confirm".
    list3_unconfirmed = ExtraMeasure(
        SECTION_301_LIST3, ("CN",), D(25), date(2019, 5, 10), source=SRC_301_UNCONFIRMED,
        coverage_confirmed=False,
    )  # fmt: skip
    list3_rack = ExtraMeasure(
        SECTION_301_LIST3, ("CN",), D(25), date(2019, 5, 10), source=SRC_US_RACK_301
    )
    excluded = _ieepa(excluded_from_reciprocal=True)  # CSMS #64724565 electronics
    not_excluded = _ieepa(excluded_from_reciprocal=False)
    measures = {
        "847150": (list3_unconfirmed, s232, *excluded),
        "847170": (list3_unconfirmed, *excluded),
        "847180": (list3_unconfirmed, s232, *excluded),
        "847330": (list3, s232, *excluded),
        "851762": (list3_unconfirmed, *excluded),  # 122: certain electronics exempt
        "854231": (semis, *excluded),
    }
    rules = [
        TariffRule(hs, "US", D(0), D(0), True, measures[hs], description=desc, source=SRC_ITA)
        for hs, desc in _ITA_LINES
    ]
    rules += [
        TariffRule(
            "85444290", "US", D("2.6"), D(0), True, (list3_cable, s122, *not_excluded),
            description="Insulated conductors ≤ 1,000 V with connectors, other", source=SRC_US_CABLE,
        ),
        TariffRule(
            "85444220", "US", D(0), D(0), True, (s122, *not_excluded),
            description="Insulated conductors with connectors, telecommunications",
            source=SRC_US_CABLE,
        ),
        TariffRule(
            "853710", "US", D("2.7"), D(0), True, (list3_pdu, s122, *not_excluded),
            description="Rack PDUs (boards for distribution of electricity ≤ 1,000 V)",
            source=SRC_US_PDU,
        ),
        TariffRule(
            "854470", "US", D(0), D(0), True, (list3_unconfirmed, s122, *not_excluded),
            description="Optical fibre cables", source=SRC_FIBRE,
        ),
        TariffRule(
            "940320", "US", D(0), D(0), True, (list3_rack, s122, *not_excluded),
            description="Other metal furniture (racks)", source=SRC_RACK,
        ),
    ]  # fmt: skip
    return rules


def _eu_rules() -> list[TariffRule]:
    rules = []
    for country, vat in EU_VAT_PCT.items():
        for hs, desc in _ITA_LINES:
            rules.append(
                TariffRule(
                    hs, country, D(0), vat, description=desc, source=f"{SRC_ITA}; {SRC_EU_VAT}"
                )
            )
        rules += [
            TariffRule(
                "85444290", country, D("3.3"), vat,
                description="Insulated conductors ≤ 1,000 V with connectors, other",
                source=f"{SRC_EU_CABLE}; {SRC_EU_VAT}",
            ),
            TariffRule(
                "85444210", country, D(0), vat,
                description="Insulated conductors with connectors, telecommunications",
                source=f"{SRC_EU_CABLE}; {SRC_EU_VAT}",
            ),
            TariffRule(
                "853710", country, D("2.1"), vat,
                description="Rack PDUs (boards for distribution of electricity ≤ 1,000 V)",
                source=f"{SRC_EU_PDU}; {SRC_EU_VAT}",
            ),
            TariffRule(
                "854470", country, D(0), vat, description="Optical fibre cables",
                source=f"{SRC_FIBRE}; {SRC_EU_VAT}",
            ),
            TariffRule(
                "940320", country, D(0), vat, description="Other metal furniture (racks)",
                source=f"{SRC_RACK}; {SRC_EU_VAT}",
            ),
        ]  # fmt: skip
    return rules


def _uk_rules() -> list[TariffRule]:
    rules = [
        TariffRule(hs, "GB", D(0), D(20), description=desc, source=f"{SRC_UK_ITA}; {SRC_UK_VAT}")
        for hs, desc in _ITA_LINES
    ]
    rules += [
        TariffRule(
            "85444290", "GB", D(2), D(20),
            description="Insulated conductors ≤ 1,000 V with connectors, other",
            source=f"{SRC_UK_CABLE}; {SRC_UK_VAT}",
        ),
        TariffRule(
            "85444210", "GB", D(0), D(20),
            description="Insulated conductors with connectors, telecommunications",
            source=f"{SRC_UK_CABLE}; {SRC_UK_VAT}",
        ),
        TariffRule(
            "854470", "GB", D(0), D(20), description="Optical fibre cables",
            source=f"{SRC_FIBRE}; {SRC_UK_VAT}",
        ),
        TariffRule(
            "940320", "GB", D(0), D(20), description="Other metal furniture (racks)",
            source=f"{SRC_RACK}; {SRC_UK_VAT}",
        ),
    ]  # fmt: skip
    return rules


def _jp_rules() -> list[TariffRule]:
    return [
        TariffRule(hs, "JP", D(0), D(10), description=desc, source=f"{SRC_ITA}; {SRC_JP_VAT}")
        for hs, desc in _ITA_LINES
    ]


def _sg_rules() -> list[TariffRule]:
    lines = (
        *_ITA_LINES,
        ("854442", "Insulated conductors ≤ 1,000 V with connectors"),
        ("853710", "Rack PDUs (boards for distribution of electricity ≤ 1,000 V)"),
        ("854470", "Optical fibre cables"),
        ("940320", "Other metal furniture (racks)"),
    )
    rules = []
    for hs, desc in lines:
        rules.append(
            TariffRule(
                hs, "SG", D(0), D(8), valid_from=date(2023, 1, 1), valid_to=date(2023, 12, 31),
                description=desc, source=SRC_SG_GST,
            )
        )  # fmt: skip
        rules.append(
            TariffRule(
                hs, "SG", D(0), D(9), valid_from=date(2024, 1, 1), description=desc,
                source=SRC_SG_GST,
            )
        )  # fmt: skip
    return rules


def _in_rules() -> list[TariffRule]:
    return [
        TariffRule(
            hs, "IN", D(0), D(18), surcharge_on_duty_pct=D(10), description=desc, source=SRC_IN
        )
        for hs, desc in (("847150", "Processing units (complete servers)"), ("847180", "Units of ADP machines"))
    ]  # fmt: skip


def default_tariff_rules() -> tuple[TariffRule, ...]:
    """All seed rules (US, DE, FR, NL, IE, GB, JP, SG, IN), each with its source string."""
    return tuple(_us_rules() + _eu_rules() + _uk_rules() + _jp_rules() + _sg_rules() + _in_rules())


DEFAULT_TARIFF_RULES: tuple[TariffRule, ...] = default_tariff_rules()
