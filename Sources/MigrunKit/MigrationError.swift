import MigrunModel

/// A migration that cannot be planned or did not complete. The original store is unchanged.
///
/// ```
/// Moody.sqlite: step Moody 2 → Moody 3: entity 'Mood', property 'rating': changes type from Integer 16 to String; write a mapping script
/// ```
public struct MigrationError: Error, Sendable, Hashable, CustomStringConvertible, CarriesCause {
  /// The kind of failure, to match on (the command line maps each to its exit code).
  public enum Code: String, Sendable, Hashable, CaseIterable {
    /// No model version has the store's entity hashes.
    case unknownSourceVersion
    case unknownVersion
    /// The destination comes before the store's version in the chain.
    case backwards
    /// A step has no mapping script and cannot be inferred.
    case notInferable
    case badMapping
    /// A policy (script) failed.
    case policy
    /// A script was stopped by one of its limits — instructions, memory, time, call depth, the size
    /// of a built-in's input — not by an error of its own: raise the limit for a big store, or find
    /// the loop.
    case scriptLimit
    case validation
    case store
    case interrupted
    /// The store holds what the step cannot carry faithfully; the message names it and the option
    /// that drops it on purpose.
    case wouldDrop
  }

  public let code: Code
  /// `From → To`, when one step is concerned.
  public let step: String?
  public let entity: String?
  public let property: String?
  public let reason: String
  /// The error underneath (a store's, a script's), when another failure caused this one.
  package let cause: ErrorCause?

  /// The error underneath (a store's, a script's), when another failure caused this one.
  public var underlyingError: (any Error)? { cause?.error }

  public init(
    _ code: Code, step: String? = nil, entity: String? = nil, property: String? = nil, reason: String,
    underlying: (any Error)? = nil
  ) {
    self.code = code
    self.step = step
    self.entity = entity
    self.property = property
    self.reason = reason
    cause = underlying.map(ErrorCause.init)
  }

  public var description: String {
    ErrorMessage.line(step.map { "step \($0)" }, entity: entity, detail: property.map { "property '\($0)'" }, reason)
  }

  func inStep(_ name: String) -> MigrationError {
    step == nil
      ? MigrationError(
        code, step: name, entity: entity, property: property, reason: reason, underlying: cause?.error)
      : self
  }
}

/// How a migration's message names an option its caller sets: the API's name
/// (`StoreMigrator.Options.drop`), which the command line says as its flag (`--drop`,
/// MigrunTools' `CommandLineWords`). One wording per option, so the two never drift apart.
package enum OptionWords {
  /// Names to drop on purpose: `add A, B to StoreMigrator.Options.drop` (the command line: `give
  /// --drop A --drop B`).
  package static func dropping(_ names: [String]) -> String {
    "add " + names.joined(separator: ", ") + " to StoreMigrator.Options.drop"
  }
}

/// An error of a script's, which says whether one of the script's limits stopped it (the scripting
/// layer's errors conform: MigrunKit knows no Lua).
package protocol ScriptFailure: Error {
  var stoppedByLimit: Bool { get }
}

extension MigrationError.Code {
  /// `.scriptLimit` when a limit stopped the script under `error`, else `.policy`.
  package static func ofPolicy(_ error: any Error) -> MigrationError.Code {
    ErrorCause.chain(error).contains { ($0 as? any ScriptFailure)?.stoppedByLimit == true } ? .scriptLimit : .policy
  }
}
