import Foundation
import PokedexCore

exit(await PokedexCLI.run(Array(CommandLine.arguments.dropFirst())))
