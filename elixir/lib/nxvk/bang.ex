defmodule Nxvk.Error do
  @moduledoc "Raised by the `!` functions: `code` is the port's error code (man nxvk-port(7))."
  defexception [:code, :message]
end

defmodule Nxvk.Bang do
  @moduledoc false
  # @before_compile hook: for every public function f that returns
  # {:ok, value} | {:error, {code, message}} (or :ok), defines f! returning
  # value (or :ok) and raising Nxvk.Error.

  # GenServer callbacks and functions that do not return {:ok, _} | {:error, _}
  @not_results [:init, :handle_call, :handle_info, :handle_cast, :handle_continue] ++
                 [:terminate, :code_change, :format_status, :child_spec, :start_link] ++
                 [:binary_path, :owners, :os_pid]

  defmacro __before_compile__(env) do
    defs =
      Module.definitions_in(env.module, :def)
      |> Enum.reject(fn {name, _} -> String.ends_with?(Atom.to_string(name), ["!", "?"]) end)
      |> Enum.reject(fn {name, _} -> String.starts_with?(Atom.to_string(name), "__") end)
      |> Enum.reject(fn {name, _} -> name in @not_results end)
      |> Enum.sort()

    for {name, arity} <- defs do
      args = Macro.generate_arguments(arity, env.module)
      bang = String.to_atom("#{name}!")

      quote do
        @doc "As `#{unquote(name)}/#{unquote(arity)}`, but returns the value and raises `Nxvk.Error` on an error."
        def unquote(bang)(unquote_splicing(args)),
          do: Nxvk.Bang.unwrap!(__MODULE__.unquote(name)(unquote_splicing(args)), unquote(name))
      end
    end
  end

  @doc false
  def unwrap!({:ok, value}, _name), do: value
  def unwrap!(:ok, _name), do: :ok

  def unwrap!({:error, {code, message}}, name),
    do: raise(Nxvk.Error, code: code, message: "#{name}: #{code}: #{message}")

  def unwrap!(other, _name), do: other
end
