import Foundation

/// Whether a test that starts a real component (gpsd, chronyd, mosquitto, Chromium, str2str,
/// htpasswd...) runs: when the component is installed, and always under CI (`CI` set),
/// where `scripts/deps` installs every one of them, so that a component missing there
/// fails its tests, loudly, rather than skipping them green.
public func installedOrInCI(_ installed: Bool) -> Bool {
    installed || ProcessInfo.processInfo.environment["CI"] != nil
}
