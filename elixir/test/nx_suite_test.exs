# Nx's own test/nx_test.exs (224 tests of the Nx module), run with
# Nxvk.Backend as the global default backend.  The file and its support
# modules are loaded from the Nx source this project builds against
# (../../shared/deps/nx or NXVK_NX_PATH); with Nx from the registry (no
# test/ there) this file runs nothing and says so.  The tests that cannot
# apply are excluded (test/support/nx_suite.ex), each with its reason.
if Code.ensure_loaded?(Nx) do
  nx_dir = Mix.Project.deps_paths()[:nx] || ""
  nx_test = Path.join(nx_dir, "test/nx_test.exs")

  if File.exists?(nx_test) do
    Nx.global_default_backend(Nxvk.Backend)

    for support <- ~w(helpers.ex container.ex backends.ex),
        do: Code.require_file(Path.join(nx_dir, "test/support/" <> support))

    Code.require_file(nx_test)
  else
    IO.puts(
      "nx_suite_test: #{nx_test} not found (Nx from the registry): Nx's nx_test.exs not run"
    )
  end
end
