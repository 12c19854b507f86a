// orchid: the command-line interface. One file per subcommand.
#include <iostream>

#include "common.h"
#include "support/error.h"

int main(int argc, char** argv) {
  CLI::App app{"Orchid: a tensor program optimizer for ONNX models.\n"
               "Reads an ONNX model and runs or checks it; later stages compile it to a faster program."};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  app.set_version_flag("--version", std::string("orchid 0.1.0"));
  int status = 0;
  orchid::cli::add_run_command(app, status);
  orchid::cli::add_check_command(app, status);
  orchid::cli::add_show_command(app, status);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const orchid::Error& e) {
    std::cerr << "orchid: error: " << e.what() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "orchid: error: out of memory\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "orchid: internal error: " << e.what() << "\n";
    return 3;
  }
  return status;
}
