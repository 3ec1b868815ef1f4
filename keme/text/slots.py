"""Print the slot contract (moment -> slots) for the resource writers."""

from keme.models.attributes import ATTRIBUTES
from keme.models.catalog import CHANGES, all_moments

# where/city come from the schedule (keme.world.schedule.where_slots) and are present only when they hold
# for the whole leaf window: a line using them needs a sibling that does not
SESSION_SLOTS = ("user_name", "date", "weekday", "part_of_day", "where", "city")


def main() -> None:
    print("session slots:", ", ".join(SESSION_SLOTS))
    print("persona attributes:", ", ".join(spec.key for spec in ATTRIBUTES))
    print("\nmoment slots:")
    for moment, slots in sorted(all_moments().items()):
        print(f"  {moment}: {', '.join(sorted(slots)) or '-'}")
    print("\nchanges (attributes set; slots; moments; update beat in moment #):")
    for change in CHANGES.values():
        print(
            f"  {change.name}: {', '.join(change.attributes)}; {', '.join(change.params) or '-'};"
            f" {', '.join(change.moments)}; #{change.update_index}"
        )


if __name__ == "__main__":
    main()
