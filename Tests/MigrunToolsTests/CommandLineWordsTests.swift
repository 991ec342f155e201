import MigrunKit
import Testing

@testable import MigrunTools

/// The library's messages name API options (what a Swift caller sets); the command line says its
/// flags in their place, from one table.
@Suite struct CommandLineWordsTests {
  @Test func everyOptionTheLibraryNamesIsSaidAsItsFlag() {
    for (option, flag) in CommandLineWords.flags {
      #expect(CommandLineWords.flags(in: "x (\(option)) y") == "x (\(flag)) y", "\(option)")
    }
  }

  @Test func namesToDropAreOneDropFlagEach() {
    let message = "the store has trigger a, index b (\(OptionWords.dropping(["a", "b"])) to drop on purpose)"
    #expect(
      CommandLineWords.flags(in: message)
        == "the store has trigger a, index b (give --drop a --drop b to drop on purpose)")
    #expect(
      CommandLineWords.flags(in: "(\(OptionWords.dropping(["ACHANGE"]))); and (\(OptionWords.dropping(["x"]))).")
        == "(give --drop ACHANGE); and (give --drop x).")
  }

  @Test func aDestinationIsSaidAsTo() {
    #expect(
      CommandLineWords.flags(in: "or the destination Moody 5 (MigrationScripts.plan's destination) to migrate back")
        == "or --to Moody 5 to migrate back")
  }

  @Test func aSalvageIsSaidAsTheCommand() {
    #expect(
      CommandLineWords.flags(in: "Salvage of `My Store.sqlite` into a new store would write 3 objects of 1 entity")
        == "`migrun salvage My Store.sqlite --out NEW` would write 3 objects of 1 entity")
  }
}
