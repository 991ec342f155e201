import Foundation

/// A store that syncs through CloudKit, and what a plan may change of it.
extension MigrationPlan {
  /// What the plan changes that CloudKit's schema does not allow, for a store that syncs through
  /// `NSPersistentCloudKitContainer`: ``ModelLint``'s `cloudkit-…` rules over the plan's versions,
  /// less what the store's own version already breaks (it syncs as it is).
  package var cloudKitFindings: [ModelLint.Finding] {
    guard let first = steps.first else { return [] }
    let versions = [first.source] + steps.map(\.destination)
    let before = Set(ModelLint.findings([first.source], cloudKit: true).map { [$0.rule, $0.entity] + $0.properties })
    return ModelLint.findings(versions, cloudKit: true).filter { finding in
      finding.rule.hasPrefix("cloudkit-") && !before.contains([finding.rule, finding.entity] + finding.properties)
    }
  }

  /// Refuses the plan when ``cloudKitFindings`` has any (unless the caller allows the changes).
  func refuseCloudKitChanges() throws {
    let findings = cloudKitFindings
    guard !findings.isEmpty else { return }
    throw MigrationError(
      .wouldDrop,
      reason:
        "the store syncs through CloudKit (it has NSPersistentCloudKitContainer's tables), and the plan changes what CloudKit's schema does not allow: "
        + findings.map(\.description).joined(separator: "; ")
        + ". Set StoreMigrator.Options.allowCloudKitChanges to migrate anyway (CloudKit will not take the change); the store is unchanged"
    )
  }
}
