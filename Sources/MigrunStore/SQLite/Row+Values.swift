import GRDB

/// Reading a store's columns without trusting them. GRDB's typed subscripts (`let n: Int = row["Z_ENT"]`)
/// end the process when a value has another type — a damaged or hand-edited store is outside input,
/// so every typed read of store data goes through these, which throw ``StoreError/Code/badValue``.
extension Row {
  /// The value of `column` as `T`, `nil` when it is NULL or absent.
  package func value<T: DatabaseValueConvertible>(_ column: String, as type: T.Type = T.self) throws(StoreError) -> T? {
    try Self.convert((self[column] as DatabaseValue?) ?? .null, column, as: type)
  }

  /// The value at `index` as `T`, `nil` when it is NULL.
  package func value<T: DatabaseValueConvertible>(at index: Int, as type: T.Type = T.self) throws(StoreError) -> T? {
    guard index >= 0, index < count else { return nil }
    return try Self.convert(self[index] as DatabaseValue, "column \(index)", as: type)
  }

  /// The value at `index` as `T`, `nil` when it is NULL; errors name the column `name`.
  package func value<T: DatabaseValueConvertible>(at index: Int, named name: String, as type: T.Type = T.self)
    throws(StoreError) -> T?
  {
    guard index >= 0, index < count else { return nil }
    return try Self.convert(self[index] as DatabaseValue, name, as: type)
  }

  /// The value at `index` as `T`; NULL is an error too; errors name the column `name`.
  package func required<T: DatabaseValueConvertible>(at index: Int, named name: String, as type: T.Type = T.self)
    throws(StoreError) -> T
  {
    guard let value = try value(at: index, named: name, as: type) else {
      throw StoreError(.badValue, reason: "\(name) is NULL")
    }
    return value
  }

  /// The value of `column` as `T`; NULL is an error too.
  package func required<T: DatabaseValueConvertible>(_ column: String, as type: T.Type = T.self) throws(StoreError) -> T
  {
    guard let value = try value(column, as: type) else {
      throw StoreError(.badValue, reason: "\(column) is NULL")
    }
    return value
  }

  /// The value at `index` as `T`; NULL is an error too.
  package func required<T: DatabaseValueConvertible>(at index: Int, as type: T.Type = T.self) throws(StoreError) -> T {
    guard let value = try value(at: index, as: type) else {
      throw StoreError(.badValue, reason: "column \(index) is NULL")
    }
    return value
  }

  private static func convert<T: DatabaseValueConvertible>(_ raw: DatabaseValue, _ column: String, as type: T.Type)
    throws(StoreError) -> T?
  {
    if raw.isNull { return nil }
    guard let value = T.fromDatabaseValue(raw) else {
      throw StoreError(.badValue, reason: "\(column) holds \(raw), not \(T.self)")
    }
    return value
  }
}
