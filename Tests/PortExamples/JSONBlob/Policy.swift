import CoreData

/// Version 1 kept a profile's settings as a JSON blob; version 2 has an attribute for each. A blob
/// that is missing or not JSON leaves the defaults.
final class ProfileToProfilePolicy: NSEntityMigrationPolicy {
  override func createDestinationInstances(
    forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
  ) throws {
    try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
    guard
      let profile = manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance])
        .first,
      let blob = sInstance.value(forKey: "settings") as? Data,
      let settings = try? JSONSerialization.jsonObject(with: blob) as? [String: Any]
    else { return }
    if let theme = settings["theme"] as? String {
      profile.setValue(theme.lowercased(), forKey: "theme")
    }
    if let size = settings["fontSize"] as? Int {
      profile.setValue(min(max(size, 8), 32), forKey: "fontSize")
    }
    let notifications = settings["notifications"] as? [String: Any]
    profile.setValue(notifications?["enabled"] as? Bool ?? true, forKey: "notifications")
  }
}
