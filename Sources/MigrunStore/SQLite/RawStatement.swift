import GRDB
import GRDBSQLite
import MigrunModel

/// A prepared statement driven through SQLite's C API: the bulk copy's row loop, where GRDB's
/// generic argument and row handling cost more than the copy itself.
package struct RawStatement {
  package let handle: OpaquePointer
  package let connection: OpaquePointer

  package init(handle: OpaquePointer, connection: OpaquePointer) {
    self.handle = handle
    self.connection = connection
  }

  /// SQLite copies what is bound (the value may go away before the statement runs).
  private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

  /// Steps once: true while it yields a row.
  package func step() throws -> Bool {
    switch sqlite3_step(handle) {
    case SQLITE_ROW: return true
    case SQLITE_DONE: return false
    default: throw failure()
    }
  }

  /// Runs a statement that yields no rows and makes it ready to run again (its bindings stay until
  /// rebound: the row loop binds every parameter each time).
  package func run() throws {
    defer { sqlite3_reset(handle) }
    guard sqlite3_step(handle) == SQLITE_DONE else { throw failure() }
  }

  package func reset() { sqlite3_reset(handle) }

  /// The error the statement's last step ended in (a constraint, or another SQLite error), with
  /// SQLite's own result code underneath.
  package func failure() -> StoreError {
    let result = sqlite3_errcode(connection)
    let message = String(cString: sqlite3_errmsg(connection))
    let code: StoreError.Code = (result & 0xFF) == SQLITE_CONSTRAINT ? .constraint : .sqlite
    return StoreError(
      code, reason: message, underlying: DatabaseError(resultCode: ResultCode(rawValue: result), message: message))
  }

  /// Binds column `column` of the row `row` is on, unchanged, as parameter `index` (1-based).
  package func bind(columnOf row: RawStatement, _ column: Int32, at index: Int32) throws {
    try check(sqlite3_bind_value(handle, index, sqlite3_column_value(row.handle, column)))
  }

  /// Binds `value` as parameter `index` (1-based). A value SQLite refuses (longer than its limit,
  /// no memory) is an error: a binding that failed keeps the last row's value, which the statement
  /// would otherwise write again.
  package func bind(_ value: StoreValue, at index: Int32) throws {
    switch value {
    case .null: try check(sqlite3_bind_null(handle, index))
    case .integer(let number): try check(sqlite3_bind_int64(handle, index, number))
    case .boolean(let flag): try check(sqlite3_bind_int64(handle, index, flag ? 1 : 0))
    // SQLite would store a NaN REAL as NULL; Core Data writes the text NaN (as StoreValueCoding does).
    case .double(let number) where number.isNaN: try check(sqlite3_bind_text(handle, index, "NaN", 3, Self.transient))
    case .double(let number), .date(let number): try check(sqlite3_bind_double(handle, index, number))
    case .string(let text):
      // By length: a NUL inside the text is kept (a C string would end there).
      var text = text
      try check(
        text.withUTF8 { bytes in
          guard let base = bytes.baseAddress else { return sqlite3_bind_text(handle, index, "", 0, Self.transient) }
          return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
            sqlite3_bind_text64(handle, index, $0, sqlite3_uint64(bytes.count), Self.transient, UInt8(SQLITE_UTF8))
          }
        })
    case .data(let bytes), .uuid(let bytes):
      try check(
        bytes.withUnsafeBytes { buffer in
          // An empty BLOB stays a BLOB (a nil base address would bind NULL).
          guard let base = buffer.baseAddress else { return sqlite3_bind_zeroblob(handle, index, 0) }
          return sqlite3_bind_blob64(handle, index, base, sqlite3_uint64(buffer.count), Self.transient)
        })
    }
  }

  /// Binds a GRDB value as it is (the object writer's values, already coded for their columns).
  package func bind(_ value: DatabaseValue, at index: Int32) throws {
    switch value.storage {
    case .null: try check(sqlite3_bind_null(handle, index))
    case .int64(let number): try check(sqlite3_bind_int64(handle, index, number))
    case .double(let number): try check(sqlite3_bind_double(handle, index, number))
    case .string(let text): try bind(.string(text), at: index)
    case .blob(let data): try bind(.data(Array(data)), at: index)
    }
  }

  /// A binding's result: anything but `SQLITE_OK` is SQLite's error, said as the statement's.
  private func check(_ result: Int32) throws {
    guard result != SQLITE_OK else { return }
    throw failure()
  }

  /// Column `column` of the current row as a store value of `type`.
  package func value(_ column: Int32, type: AttributeType) -> StoreValue {
    switch sqlite3_column_type(handle, column) {
    case SQLITE_NULL:
      return .null
    case SQLITE_INTEGER:
      return StoreValueCoding.value(integer: sqlite3_column_int64(handle, column), type: type)
    case SQLITE_FLOAT:
      return StoreValueCoding.value(double: sqlite3_column_double(handle, column), type: type)
    case SQLITE_TEXT:
      let count = Int(sqlite3_column_bytes(handle, column))
      guard let text = sqlite3_column_text(handle, column) else { return .string("") }
      return StoreValueCoding.value(
        text: String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self), type: type)
    default:
      let count = Int(sqlite3_column_bytes(handle, column))
      guard let blob = sqlite3_column_blob(handle, column) else { return StoreValueCoding.value(bytes: [], type: type) }
      return StoreValueCoding.value(bytes: Array(UnsafeRawBufferPointer(start: blob, count: count)), type: type)
    }
  }

  package func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
}
