//! Calendar dates for `until`: parsing `YYYY-MM-DD`, today in UTC, and days since the epoch.

use std::fmt;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};
use thiserror::Error;

/// A calendar date (proleptic Gregorian), as in `until`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Hash)]
pub struct Date {
    /// The year.
    pub year: i32,
    /// The month, 1 to 12.
    pub month: u32,
    /// The day of the month, from 1.
    pub day: u32,
}

/// A string that is not a valid `YYYY-MM-DD` date.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("'{0}' is not a valid date (YYYY-MM-DD)")]
pub struct DateError(pub String);

impl Date {
    /// The date, if it exists (`Date::new(2027, 2, 29)` does not).
    pub fn new(year: i32, month: u32, day: u32) -> Option<Date> {
        let valid = (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month);
        valid.then_some(Date { year, month, day })
    }

    /// Today in UTC, from the system clock.
    pub fn today() -> Date {
        let secs = match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            // A clock before 1970: count backwards.
            Err(e) => i64::try_from(e.duration().as_secs()).map_or(i64::MIN, |s| -s - 1),
        };
        Date::from_unix_days(secs.div_euclid(86_400))
    }

    /// The date `days` days after 1970-01-01 (before it when negative), by Howard Hinnant's
    /// civil-from-days algorithm.
    pub fn from_unix_days(days: i64) -> Date {
        let z = i128::from(days) + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097; // [0, 146096]
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
        let mp = (5 * doy + 2) / 153; // [0, 11], March first
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i128::from(month <= 2);
        Date {
            year: year.clamp(i128::from(i32::MIN), i128::from(i32::MAX)) as i32,
            month: month as u32,
            day: day as u32,
        }
    }
}

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => 31,
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

impl FromStr for Date {
    type Err = DateError;

    /// Parses exactly `YYYY-MM-DD`.
    fn from_str(s: &str) -> Result<Date, DateError> {
        let err = || DateError(s.to_string());
        let b = s.as_bytes();
        let shape_ok = b.len() == 10
            && b[4] == b'-'
            && b[7] == b'-'
            && b.iter()
                .enumerate()
                .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
        if !shape_ok {
            return Err(err());
        }
        let year = s[0..4].parse().map_err(|_| err())?;
        let month = s[5..7].parse().map_err(|_| err())?;
        let day = s[8..10].parse().map_err(|_| err())?;
        Date::new(year, month, day).ok_or_else(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expectations::testutil::date;

    #[test]
    fn dates_parse_display_and_compare() {
        let d = date("2027-03-31");
        assert_eq!(
            d,
            Date {
                year: 2027,
                month: 3,
                day: 31
            }
        );
        assert_eq!(d.to_string(), "2027-03-31");
        assert_eq!(Date::new(5, 1, 2).unwrap().to_string(), "0005-01-02");
        assert!(date("2027-03-31") < date("2027-04-01"));
        assert!(date("2026-12-31") < date("2027-01-01"));
        assert!(Date::new(2028, 2, 29).is_some());
        assert!(Date::new(2027, 2, 29).is_none());
        assert!(Date::new(1900, 2, 29).is_none());
        assert!(Date::new(2000, 2, 29).is_some());
        assert!(Date::new(2027, 4, 31).is_none());
        assert!(Date::new(2027, 13, 1).is_none());
        assert!(Date::new(2027, 1, 0).is_none());
        for bad in [
            "",
            "2027-3-31",
            "2027/03/31",
            "27-03-31",
            "2027-03-31 ",
            "+027-03-31",
            "2027-00-10",
        ] {
            assert_eq!(
                bad.parse::<Date>(),
                Err(DateError(bad.to_string())),
                "{bad}"
            );
        }
    }

    #[test]
    fn days_since_the_epoch_convert_to_civil_dates() {
        assert_eq!(Date::from_unix_days(0), date("1970-01-01"));
        assert_eq!(Date::from_unix_days(-1), date("1969-12-31"));
        assert_eq!(Date::from_unix_days(11_016), date("2000-02-29"));
        assert_eq!(Date::from_unix_days(19_723), date("2024-01-01"));
        assert_eq!(Date::from_unix_days(20_513), date("2026-03-01"));
        // Walking day by day visits every valid date once, in order.
        let mut prev = Date::from_unix_days(-800);
        for day in -799..2_000 {
            let d = Date::from_unix_days(day);
            assert!(prev < d);
            assert!(Date::new(d.year, d.month, d.day).is_some());
            prev = d;
        }
    }

    #[test]
    fn today_is_a_plausible_date() {
        let today = Date::today();
        assert!(today >= date("2025-01-01"), "{today}");
        assert_eq!(today.to_string().parse::<Date>(), Ok(today));
    }
}
