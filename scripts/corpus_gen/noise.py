"""Alerts from outside the corpus's domain (office equipment, facilities, HR and finance
tools) for the "noise" cases: whatever the search returns for them is wrong.

They are shaped like the in-domain alerts (a CamelCase name, labels, a rule expression) so
only their meaning sets them apart. Service and team names stay clear of the corpus's
services (pools.py), which already has `payroll` and `timesheets`: an alert about those
would be in-domain.

Changing these changes the cases, never the corpus.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NoiseAlert:
    """One out-of-domain alert; `{...}` are slots filled from `NOISE_SLOTS` choices."""

    name: str
    service: str
    instance: str
    summary: str
    description: str
    expr: str


#: Slot -> the values a noise case draws from.
NOISE_SLOTS: dict[str, tuple[str, ...]] = {
    "site": ("hq-berlin", "office-lisbon", "office-austin", "office-pune", "office-dublin"),
    "floor": ("1", "2", "3", "4", "5", "6"),
    "wing": ("north", "east", "south", "west"),
    "low": ("3", "5", "7", "9"),
    "high": ("91", "94", "96", "98"),
    "count": ("4", "7", "12", "19", "26", "41"),
    "days": ("3", "5", "7", "10"),
}

NOISE: tuple[NoiseAlert, ...] = (
    NoiseAlert("OfficePrinterTonerLow", "office-printers", "prn-{floor}{wing}.{site}:9100",
               "Printer on floor {floor} ({wing} wing) has {low}% toner left",
               "The colour laser printer prn-{floor}{wing} at {site} reports its black "
               "cartridge nearly empty. Order a replacement before the weekly print run.",
               'printer_supply_level_percent{{printer="prn-{floor}{wing}",color="black"}} < 10'),
    NoiseAlert("PrinterPaperJamStuck", "office-printers", "prn-{floor}{wing}.{site}:9100",
               "Paper jam on prn-{floor}{wing} for over an hour",
               "Tray 2 of the {site} floor {floor} printer has reported a jam since this "
               "morning; print jobs queue up on the print server.",
               'printer_status_code{{printer="prn-{floor}{wing}",status="jam"}} == 1'),
    NoiseAlert("OfficeWifiAccessPointOffline", "office-network", "ap-{floor}-{wing}.{site}",
               "Wi-Fi access point ap-{floor}-{wing} at {site} is offline",
               "The ceiling access point on floor {floor} stopped answering the controller. "
               "Laptops nearby roam to neighbouring APs with weaker signal.",
               'wifi_ap_up{{site="{site}",ap="ap-{floor}-{wing}"}} == 0'),
    NoiseAlert("GuestWifiPortalCaptiveLoginBroken", "office-network", "guest-portal.{site}",
               "Guest Wi-Fi login page fails for visitors at {site}",
               "Visitors cannot accept the terms on the captive portal; the splash page "
               "returns an error after the email field.",
               'probe_success{{job="guest-portal",site="{site}"}} == 0'),
    NoiseAlert("BadgeReaderDoorControllerOffline", "building-access", "door-{floor}{wing}",
               "Badge reader at the {wing} entrance of floor {floor} is offline",
               "The door controller at {site} has not checked in for {count} minutes. Staff "
               "badges are not accepted; the door stays locked.",
               'access_controller_last_heartbeat_seconds{{door="door-{floor}{wing}"}} > 300'),
    NoiseAlert("MeetingRoomDisplayUnreachable", "workplace-av", "room-{floor}{wing}-screen",
               "Screen in meeting room {floor}{wing} at {site} does not respond",
               "The room display dropped off the AV management network; screen sharing in "
               "the room does not work until it is power cycled.",
               'av_device_online{{room="{floor}{wing}",site="{site}"}} == 0'),
    NoiseAlert("CoffeeMachineWaterTankEmpty", "facilities-iot", "coffee-{floor}.{site}",
               "Coffee machine on floor {floor} is out of water",
               "The bean-to-cup machine in the {wing} kitchen reports an empty tank and has "
               "refused {count} orders.",
               'coffee_machine_water_level_percent{{floor="{floor}"}} < 5'),
    NoiseAlert("OfficeTemperatureTooWarm", "facilities-hvac", "hvac-zone-{floor}{wing}",
               "Office zone {floor}{wing} at {site} is at 28°C",
               "The air handling unit for the {wing} side of floor {floor} cannot hold the "
               "setpoint; people are moving to other floors.",
               'hvac_zone_temperature_celsius{{zone="{floor}{wing}",site="{site}"}} > 27'),
    NoiseAlert("LeaveRequestsAwaitingApproval", "hr-portal", "hr-portal.corp",
               "{count} vacation requests wait for approval for more than {days} days",
               "Managers have not answered leave requests in the HR portal; the oldest one "
               "starts next week.",
               "hr_leave_requests_pending_days_max > {days}"),
    NoiseAlert("ExpenseClaimsNotSubmitted", "finance-tools", "expenses.corp",
               "{count} expense claims for last month are still drafts",
               "Month-end close needs every claim submitted by Friday; the finance team "
               "sends reminders to the owners.",
               'expense_claims_total{{state="draft",period="last_month"}} > 0'),
    NoiseAlert("DesignToolLicenseSeatsExhausted", "software-licenses", "license-server.corp",
               "Design tool licences {high}% assigned",
               "Only a handful of seats of the design suite are free; new hires in the "
               "marketing team cannot be onboarded.",
               'license_seats_used{{product="design-suite"}} / license_seats_total'
               '{{product="design-suite"}} > 0.9'),
    NoiseAlert("LaptopDiskEncryptionDisabled", "device-management", "mdm.corp",
               "{count} laptops report disk encryption turned off",
               "The device management service found company laptops without full-disk "
               "encryption; their owners get a compliance notice.",
               'mdm_devices_total{{encryption="off",type="laptop"}} > 0'),
    NoiseAlert("ParkingGarageBarrierStuck", "facilities-parking", "garage-gate.{site}",
               "Garage exit barrier at {site} is stuck open",
               "The exit barrier sensor reports an open gate for {count} minutes; the "
               "security desk has been informed.",
               'parking_barrier_open_seconds{{site="{site}",gate="exit"}} > 600'),
    NoiseAlert("ElevatorServiceOverdue", "facilities-building", "lift-{wing}.{site}",
               "Lift in the {wing} core at {site} is {days} days past its inspection",
               "The maintenance contractor has not logged the yearly inspection; facilities "
               "has to book a slot before the permit lapses.",
               'elevator_days_since_inspection{{lift="{wing}",site="{site}"}} > 365'),
    NoiseAlert("OfficeUpsBatteryDegraded", "office-network", "ups-closet-{floor}.{site}",
               "UPS battery in the floor {floor} network closet at {low}% health",
               "The battery pack of the closet UPS failed its self-test; it would carry the "
               "switches for only a few minutes in a power cut.",
               'ups_battery_health_percent{{closet="{floor}",site="{site}"}} < 50'),
    NoiseAlert("DeskBookingOverbooked", "workplace-booking", "desks.corp",
               "Floor {floor} at {site} booked {high}% for tomorrow",
               "The desk booking tool has almost no desks left on the floor; team days may "
               "need to move.",
               'desk_bookings_ratio{{site="{site}",floor="{floor}"}} > 0.95'),
    NoiseAlert("MailroomParcelLockerFull", "facilities-mailroom", "locker-bank.{site}",
               "Parcel lockers at {site} are full",
               "All {count} compartments of the mailroom locker hold uncollected parcels; "
               "couriers leave deliveries at reception.",
               'parcel_locker_free_compartments{{site="{site}"}} == 0'),
    NoiseAlert("TrainingCourseCompletionOverdue", "learning-portal", "learning.corp",
               "{count} staff overdue on the annual security awareness course",
               "The learning portal lists employees who have not finished the mandatory "
               "course; their managers get a reminder.",
               'learning_course_overdue_total{{course="security-awareness"}} > 0'),
)
