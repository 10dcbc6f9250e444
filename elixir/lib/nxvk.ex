defmodule Nxvk do
  @moduledoc """
  Tensors on a Vulkan GPU through `nxvk port`, with Nx-style names.

      {:ok, a} = Nxvk.from_list([[1.0, 2.0], [3.0, 4.0]])
      {:ok, b} = Nxvk.exp(a)
      {:ok, s} = Nxvk.sum(b, axes: [1])
      {:ok, [10.107338905334473, 74.68368530273438]} = Nxvk.to_list(s)

  Every function returns `{:ok, result}` or `{:error, {code, message}}`,
  where `code` is the port's error code as an atom (`:shape_mismatch`,
  `:unknown_handle`, `:device_lost`, ... see man nxvk-port(7)).

  Tensors are `Nxvk.Tensor` structs naming device memory; they belong to
  the process that made them and are freed when it exits (or by `free/1`).
  Non-finite floats are the atoms `:nan`, `:infinity` and `:neg_infinity`,
  in and out.

  Functions that make a tensor from nothing (`from_list/2`, `iota/2`, ...)
  take `server:` (default `Nxvk.Server`); the others use their inputs'
  server.
  """

  alias Nxvk.{Server, Tensor}

  @before_compile Nxvk.Bang

  @type result(t) :: {:ok, t} | {:error, {atom, String.t()}}

  # -------------------------------------------------------- data in, out

  @doc """
  A tensor from a number or nested lists (rows of equal length).
  `type:` `:f32` `:f64` `:i32` `:u8` (or Nx's `{:f, 32}`...); default `:i32`
  when every element is an integer, else `:f32`.
  """
  @spec from_list(number | atom | list, keyword) :: result(Tensor.t())
  def from_list(data, opts \\ []) do
    with {:ok, shape} <- list_shape(data),
         flat = List.flatten(List.wrap(data)),
         {:ok, dtype} <- pick_dtype(opts[:type], flat) do
      try do
        from_binary(Tensor.encode(flat, dtype), dtype, shape, opts)
      rescue
        e in ArgumentError -> {:error, {:bad_request, Exception.message(e)}}
      end
    end
  end

  @doc "A tensor from little-endian C-order bytes, a dtype and a shape tuple."
  @spec from_binary(binary, atom | tuple, tuple, keyword) :: result(Tensor.t())
  def from_binary(bin, dtype, shape, opts \\ []) when is_binary(bin) and is_tuple(shape) do
    with {:ok, dtype} <- dtype_of(dtype) do
      server = server(opts)
      header = %{"cmd" => "put", "dtype" => dtype, "shape" => Tuple.to_list(shape)}

      with {:ok, reply, _} <- Server.request(server, header, bin),
           do: {:ok, tensor(server, reply)}
    end
  end

  @doc "The tensor's bytes (little-endian, C order)."
  @spec to_binary(Tensor.t()) :: result(binary)
  def to_binary(%Tensor{server: s, handle: h}) do
    with {:ok, _reply, bytes} <- Server.request(s, %{"cmd" => "get", "handle" => h}),
         do: {:ok, bytes}
  end

  @doc "The elements as a flat list (non-finite floats as atoms)."
  @spec to_flat_list(Tensor.t()) :: result(list)
  def to_flat_list(%Tensor{} = t) do
    with {:ok, bytes} <- to_binary(t), do: {:ok, Tensor.decode(bytes, t.dtype)}
  end

  @doc "The elements as nested lists (a number for a scalar)."
  @spec to_list(Tensor.t()) :: result(list | number | atom)
  def to_list(%Tensor{} = t) do
    with {:ok, flat} <- to_flat_list(t), do: {:ok, Tensor.nest(flat, t.shape)}
  end

  @doc """
  Hands the tensor to process `pid`: it then lives as long as `pid` does
  (a Task can make a tensor and give it to its caller before it ends).
  """
  @spec transfer(Tensor.t(), pid) :: :ok | {:error, {atom, String.t()}}
  def transfer(%Tensor{server: s, handle: h}, pid) when is_pid(pid),
    do: Server.transfer(s, h, pid)

  @doc "Frees the tensor's device memory now (else its owner's exit does)."
  @spec free(Tensor.t()) :: :ok | {:error, {atom, String.t()}}
  def free(%Tensor{server: s, handle: h}) do
    with {:ok, _, _} <- Server.request(s, %{"cmd" => "free", "handle" => h}), do: :ok
  end

  # ------------------------------------------------------------------ ops

  @doc """
  Any op of the port's table by name (`Nxvk.Server.info/1` lists them),
  on tensors, with an attribute map.
  """
  @spec op(String.t() | atom, [Tensor.t()], map, keyword) :: result(Tensor.t())
  def op(name, inputs, attrs \\ %{}, opts \\ []) do
    with {:ok, server} <- common_server(inputs, opts) do
      header = %{"cmd" => "op", "op" => to_string(name), "in" => Enum.map(inputs, & &1.handle)}
      header = if attrs == %{}, do: header, else: Map.put(header, "attrs", attrs)
      with {:ok, reply, _} <- Server.request(server, header), do: {:ok, tensor(server, reply)}
    end
  end

  @binary ~w(add subtract multiply divide pow max min remainder atan2
             equal not_equal less less_equal greater greater_equal)a
  @unary ~w(exp log sqrt rsqrt abs negate sigmoid tanh floor ceil round sign
            sin cos expm1 log1p erf tan asin acos atan sinh cosh asinh acosh atanh
            cbrt erfc erf_inv)a
  @reductions ~w(sum product reduce_max reduce_min argmax argmin mean)a

  for name <- @binary do
    @doc """
    Elementwise `#{name}` with numpy broadcasting.  Either side may be a
    number (or `:nan`, `:infinity`, `:neg_infinity`), taken as a scalar of
    the other side's dtype.
    """
    @spec unquote(name)(Tensor.t() | number | atom, Tensor.t() | number | atom) ::
            result(Tensor.t())
    def unquote(name)(a, b), do: binary_op(unquote(Atom.to_string(name)), a, b)
  end

  for name <- @unary do
    @doc "Elementwise `#{name}`."
    @spec unquote(name)(Tensor.t()) :: result(Tensor.t())
    def unquote(name)(%Tensor{} = t), do: op(unquote(Atom.to_string(name)), [t])
  end

  for name <- @reductions do
    @doc """
    `#{name}` over `axes:` (default all), keeping them as length 1 with
    `keep_axes: true`.
    """
    @spec unquote(name)(Tensor.t(), keyword) :: result(Tensor.t())
    def unquote(name)(%Tensor{} = t, opts \\ []) do
      attrs =
        %{}
        |> put_opt("axes", opts[:axes])
        |> put_opt("keep_axes", opts[:keep_axes])

      op(unquote(Atom.to_string(name)), [t], attrs)
    end
  end

  @doc "Where `pred` (u8) is nonzero `on_true`, else `on_false`, broadcasting."
  def select(%Tensor{} = pred, %Tensor{} = on_true, %Tensor{} = on_false),
    do: op("select", [pred, on_true, on_false])

  @doc "Matrix product `[m,k]·[k,n]`, or batched `[b,m,k]·[b,k,n]`."
  def dot(%Tensor{} = a, %Tensor{} = b), do: op("dot", [a, b])

  @doc "Permutes the axes (`axes:`, default reversed)."
  def transpose(%Tensor{} = t, opts \\ []),
    do: op("transpose", [t], put_opt(%{}, "perm", opts[:axes]))

  @doc "The same elements under a new shape tuple (one dimension may be -1)."
  def reshape(%Tensor{} = t, shape) when is_tuple(shape),
    do: op("reshape", [t], %{"shape" => Tuple.to_list(shape)})

  @doc "`lengths` elements per axis from `start_indices`, every `strides:` (default 1)."
  def slice(%Tensor{} = t, start_indices, lengths, opts \\ []) do
    attrs = put_opt(%{"start" => start_indices, "length" => lengths}, "stride", opts[:strides])
    op("slice", [t], attrs)
  end

  @doc "Joins tensors along `axis:` (default 0)."
  def concatenate([_ | _] = tensors, opts \\ []),
    do: op("concatenate", tensors, put_opt(%{}, "axis", opts[:axis]))

  @doc "Converts to another dtype (NaN becomes 0; floats to integers saturate)."
  def as_type(%Tensor{} = t, type) do
    with {:ok, dtype} <- dtype_of(type), do: op("as_type", [t], %{"dtype" => dtype})
  end

  @doc "0, 1, 2, ... over `shape` (or along `axis:`), of `type:` (default `:i32`)."
  def iota(shape, opts \\ []) when is_tuple(shape), do: source("iota", shape, opts, [:axis])

  @doc "Uniform in [0, 1) from Philox4x32-10 keyed by `seed:` (default 0); `type:` `:f32` or `:f64`."
  def random_uniform(shape, opts \\ []) when is_tuple(shape),
    do: source("random_uniform", shape, opts, [:seed])

  @doc "Standard normal (Box-Muller over the same generator); options as `random_uniform/2`."
  def random_normal(shape, opts \\ []) when is_tuple(shape),
    do: source("random_normal", shape, opts, [:seed])

  # -------------------------------------------------------------- graphs

  @doc """
  Runs a graph of ops in one round trip.

      Nxvk.run_graph(%{
        inputs: %{"x" => tensor, "y" => [1.0, 2.0, :nan]},
        ops: [%{op: "exp", in: ["x"], out: "e"},
              %{op: "add", in: ["e", "y"], out: "s"},
              %{op: "sum", in: ["s"], attrs: %{axes: [0]}, out: "total"}],
        outputs: ["s", "total"]
      })
      #=> {:ok, %{"s" => %Nxvk.Tensor{}, "total" => %Nxvk.Tensor{}}}

  Inputs are tensors, nested lists or numbers (typed as by `from_list/2`),
  or `{dtype, shape, binary}`.  Options: `fetch: true` also downloads the
  outputs; `keep: false` makes no tensors.  The result maps each output
  name to a tensor (keep), its nested list (fetch, no keep), or
  `{tensor, list}` (both).
  """
  @spec run_graph(map, keyword) :: result(map)
  def run_graph(graph, opts \\ []) do
    inputs = Map.get(graph, :inputs, %{}) |> Enum.to_list()
    tensors = for {_, %Tensor{} = t} <- inputs, do: t
    fetch = Keyword.get(opts, :fetch, false)
    keep = Keyword.get(opts, :keep, true)

    with {:ok, server} <- common_server(tensors, opts),
         {:ok, pairs, data} <- graph_inputs(inputs) do
      outputs = Map.get(graph, :outputs, [])

      header = %{
        "cmd" => "run",
        "fetch" => fetch,
        "keep" => keep,
        "graph" => %{
          "inputs" => {:object, pairs},
          "ops" => Map.get(graph, :ops, []),
          "outputs" => {:object, Enum.map(outputs, &{to_string(&1), true})}
        }
      }

      with {:ok, reply, bytes} <- Server.request(server, header, data) do
        {:ok, graph_results(server, reply["outputs"], bytes, fetch, keep)}
      end
    end
  end

  defp graph_inputs(inputs) do
    Enum.reduce_while(inputs, {:ok, [], []}, fn {name, value}, {:ok, pairs, data} ->
      case graph_input(value) do
        {:ok, json, bytes} -> {:cont, {:ok, [{to_string(name), json} | pairs], [data | bytes]}}
        error -> {:halt, error}
      end
    end)
    |> case do
      {:ok, pairs, data} -> {:ok, Enum.reverse(pairs), IO.iodata_to_binary(data)}
      error -> error
    end
  end

  defp graph_input(%Tensor{handle: h}), do: {:ok, %{"handle" => h}, []}

  defp graph_input({dtype, shape, bin}) when is_tuple(shape) and is_binary(bin) do
    with {:ok, dtype} <- dtype_of(dtype),
         do: {:ok, bytes_input(dtype, shape), bin}
  end

  defp graph_input(data) do
    with {:ok, shape} <- list_shape(data),
         flat = List.flatten(List.wrap(data)),
         {:ok, dtype} <- pick_dtype(nil, flat) do
      {:ok, bytes_input(dtype, shape), Tensor.encode(flat, dtype)}
    end
  end

  defp bytes_input(dtype, shape),
    do: %{"dtype" => dtype, "shape" => Tuple.to_list(shape), "bytes" => true}

  defp graph_results(server, outputs, bytes, fetch, keep) do
    {results, _rest} =
      Enum.map_reduce(outputs, bytes, fn out, rest ->
        t = if keep, do: tensor(server, out)
        {value, rest} = take_value(out, rest)

        result =
          cond do
            fetch != false and keep and value != nil -> {t, value}
            value != nil -> value
            true -> t
          end

        {{out["name"], result}, rest}
      end)

    Map.new(results)
  end

  defp take_value(%{"nbytes" => n} = out, bytes) do
    <<mine::binary-size(n), rest::binary>> = bytes
    {:ok, dtype} = Tensor.normalize_dtype(out["dtype"])
    shape = List.to_tuple(out["shape"])
    {Tensor.nest(Tensor.decode(mine, dtype), shape), rest}
  end

  defp take_value(_out, bytes), do: {nil, bytes}

  # ------------------------------------------------------------- helpers

  defp binary_op(name, %Tensor{} = a, %Tensor{} = b), do: op(name, [a, b])

  # a number on one side: a one-op graph with the scalar's bytes in the frame
  defp binary_op(name, %Tensor{} = a, b), do: scalar_op(name, a, b, ["t", "k"])
  defp binary_op(name, a, %Tensor{} = b), do: scalar_op(name, b, a, ["k", "t"])

  defp binary_op(name, _a, _b),
    do: {:error, {:bad_request, "#{name}: give at least one Nxvk.Tensor"}}

  defp scalar_op(name, %Tensor{} = t, k, order) do
    bin = Tensor.encode([k], t.dtype)

    graph = %{
      inputs: %{"t" => t, "k" => {t.dtype, {}, bin}},
      ops: [%{"op" => name, "in" => order, "out" => "r"}],
      outputs: ["r"]
    }

    with {:ok, %{"r" => r}} <- run_graph(graph), do: {:ok, r}
  rescue
    e in ArgumentError -> {:error, {:bad_request, "#{name}: #{Exception.message(e)}"}}
  end

  defp source(name, shape, opts, keys) do
    attrs =
      Enum.reduce(keys, %{"shape" => Tuple.to_list(shape)}, fn k, acc ->
        put_opt(acc, Atom.to_string(k), opts[k])
      end)

    with {:ok, attrs} <- put_type(attrs, opts[:type]), do: op(name, [], attrs, opts)
  end

  defp put_type(attrs, nil), do: {:ok, attrs}

  defp put_type(attrs, type) do
    with {:ok, dtype} <- dtype_of(type), do: {:ok, Map.put(attrs, "dtype", dtype)}
  end

  defp put_opt(map, _key, nil), do: map
  defp put_opt(map, key, value), do: Map.put(map, key, value)

  defp dtype_of(type) do
    case Tensor.normalize_dtype(type) do
      {:ok, d} ->
        {:ok, d}

      :error ->
        {:error, {:unsupported_dtype, "unknown dtype #{inspect(type)} (:f32 :f64 :i32 :u8)"}}
    end
  end

  defp pick_dtype(nil, flat) do
    {:ok, if(Enum.all?(flat, &is_integer/1), do: :i32, else: :f32)}
  end

  defp pick_dtype(type, _flat), do: dtype_of(type)

  defp server(opts) do
    name = Keyword.get(opts, :server, Server)
    GenServer.whereis(name) || name
  end

  defp common_server([], opts), do: {:ok, server(opts)}

  defp common_server([%Tensor{server: s} | rest], _opts) do
    if Enum.all?(rest, &match?(%Tensor{server: ^s}, &1)),
      do: {:ok, s},
      else: {:error, {:bad_request, "tensors from different servers (or not Nxvk.Tensor)"}}
  end

  defp common_server(_, _), do: {:error, {:bad_request, "inputs must be Nxvk.Tensor structs"}}

  defp tensor(server, reply) do
    {:ok, dtype} = Tensor.normalize_dtype(reply["dtype"])

    %Tensor{
      dtype: dtype,
      shape: List.to_tuple(reply["shape"]),
      handle: reply["handle"],
      server: server
    }
  end

  # shape of nested lists; rows must agree
  defp list_shape(x) when not is_list(x), do: {:ok, {}}
  defp list_shape(list), do: with({:ok, dims} <- dims(list), do: {:ok, List.to_tuple(dims)})

  defp dims([]), do: {:ok, [0]}

  defp dims([first | _] = list) when is_list(first) do
    inner = Enum.map(list, fn row -> if is_list(row), do: dims(row), else: :ragged end)

    case Enum.uniq(inner) do
      [{:ok, d}] -> {:ok, [length(list) | d]}
      _ -> {:error, {:bad_request, "ragged nested list: rows differ in shape"}}
    end
  end

  defp dims(list) do
    if Enum.any?(list, &is_list/1),
      do: {:error, {:bad_request, "ragged nested list: rows differ in shape"}},
      else: {:ok, [length(list)]}
  end
end
