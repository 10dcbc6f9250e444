defmodule Nxvk.Tensor do
  @moduledoc """
  A tensor living in device memory, served by an `Nxvk.Server`.

    * `dtype`  - `:f32`, `:f64`, `:i32` or `:u8`
    * `shape`  - a tuple of dimensions (`{}` for a scalar), as in Nx
    * `handle` - the server's handle (an opaque positive integer)
    * `server` - the `Nxvk.Server` pid that holds it

  The process that made a tensor owns it: when that process exits, the
  server frees the tensor's device memory.  Pass the struct to another
  process only while the owner is alive.
  """

  @enforce_keys [:dtype, :shape, :handle, :server]
  defstruct [:dtype, :shape, :handle, :server]

  @type dtype :: :f32 | :f64 | :i32 | :u8
  @type t :: %__MODULE__{
          dtype: dtype,
          shape: tuple,
          handle: pos_integer,
          server: pid
        }

  @dtypes [:f32, :f64, :i32, :u8]

  @doc false
  def dtypes, do: @dtypes

  @doc "Bytes of one element."
  def dtype_size(:f32), do: 4
  def dtype_size(:f64), do: 8
  def dtype_size(:i32), do: 4
  def dtype_size(:u8), do: 1

  @doc "Elements of a shape tuple."
  def size(%__MODULE__{shape: shape}), do: shape_size(shape)

  @doc false
  def shape_size(shape), do: shape |> Tuple.to_list() |> Enum.reduce(1, &*/2)

  @doc """
  A dtype from an atom, a string or an Nx type tuple (`{:f, 32}`,
  `{:s, 32}`, `{:u, 8}`, `{:f, 64}`); `:error` when there is none.
  """
  def normalize_dtype(d) when d in @dtypes, do: {:ok, d}
  def normalize_dtype({:f, 32}), do: {:ok, :f32}
  def normalize_dtype({:f, 64}), do: {:ok, :f64}
  def normalize_dtype({:s, 32}), do: {:ok, :i32}
  def normalize_dtype({:u, 8}), do: {:ok, :u8}
  def normalize_dtype(s) when s in ["f32", "float32"], do: {:ok, :f32}
  def normalize_dtype(s) when s in ["f64", "float64"], do: {:ok, :f64}
  def normalize_dtype(s) when s in ["i32", "int32"], do: {:ok, :i32}
  def normalize_dtype(s) when s in ["u8", "uint8"], do: {:ok, :u8}
  # the engine's comparisons give bool: one byte 0 or 1, read as u8 (Nx's
  # comparison type)
  def normalize_dtype("bool"), do: {:ok, :u8}
  def normalize_dtype(_), do: :error

  # ------------------------------------------------------- element codecs

  @doc """
  Elements to little-endian bytes.  Floats may be `:nan`, `:infinity` and
  `:neg_infinity` (Nx's names for the values an Erlang float cannot hold);
  integers are accepted for float dtypes.
  """
  def encode(list, dtype), do: IO.iodata_to_binary(Enum.map(list, &encode_one(&1, dtype)))

  @f32_nan <<0x7FC00000::unsigned-32-little>>
  @f32_inf <<0x7F800000::unsigned-32-little>>
  @f32_ninf <<0xFF800000::unsigned-32-little>>
  @f64_nan <<0x7FF8000000000000::unsigned-64-little>>
  @f64_inf <<0x7FF0000000000000::unsigned-64-little>>
  @f64_ninf <<0xFFF0000000000000::unsigned-64-little>>

  defp encode_one(:nan, :f32), do: @f32_nan
  defp encode_one(:infinity, :f32), do: @f32_inf
  defp encode_one(:neg_infinity, :f32), do: @f32_ninf
  defp encode_one(x, :f32) when is_number(x), do: <<x::float-32-little>>
  defp encode_one(:nan, :f64), do: @f64_nan
  defp encode_one(:infinity, :f64), do: @f64_inf
  defp encode_one(:neg_infinity, :f64), do: @f64_ninf
  defp encode_one(x, :f64) when is_number(x), do: <<x::float-64-little>>
  defp encode_one(x, :i32) when is_integer(x), do: <<x::signed-32-little>>
  defp encode_one(x, :u8) when is_integer(x), do: <<x::unsigned-8>>
  defp encode_one(true, :u8), do: <<1>>
  defp encode_one(false, :u8), do: <<0>>

  defp encode_one(x, dtype),
    do: raise(ArgumentError, "#{inspect(x)} is not a #{dtype} element")

  @doc """
  Little-endian bytes to a flat list of elements.

  Non-finite floats come back as `:nan`, `:infinity` and `:neg_infinity`.
  The usual comprehension `for <<x::float-32-little <- bin>>, do: x` cannot
  do this: a float segment does not match NaN or infinity bits, and a binary
  generator silently stops at the first segment that does not match, so the
  list ends early with no error.  Here every element is read as an integer first and classified by
  its exponent bits.
  """
  def decode(bin, :f32), do: for(<<bits::unsigned-32-little <- bin>>, do: f32(bits))
  def decode(bin, :f64), do: for(<<bits::unsigned-64-little <- bin>>, do: f64(bits))
  def decode(bin, :i32), do: for(<<x::signed-32-little <- bin>>, do: x)
  def decode(bin, :u8), do: :binary.bin_to_list(bin)

  defp f32(bits) do
    case <<bits::unsigned-32>> do
      <<0::1, 0xFF::8, 0::23>> -> :infinity
      <<1::1, 0xFF::8, 0::23>> -> :neg_infinity
      <<_::1, 0xFF::8, _::23>> -> :nan
      <<x::float-32>> -> x
    end
  end

  defp f64(bits) do
    case <<bits::unsigned-64>> do
      <<0::1, 0x7FF::11, 0::52>> -> :infinity
      <<1::1, 0x7FF::11, 0::52>> -> :neg_infinity
      <<_::1, 0x7FF::11, _::52>> -> :nan
      <<x::float-64>> -> x
    end
  end

  @doc false
  # nested lists in C order from a flat list and a shape tuple
  def nest(flat, {}), do: hd(flat)
  def nest(flat, shape), do: do_nest(flat, Tuple.to_list(shape))

  defp do_nest(flat, [_]), do: flat

  defp do_nest(flat, [dim | inner]) do
    case Enum.reduce(inner, 1, &*/2) do
      # an empty row: its shape, not the (empty) data, says how many
      0 -> List.duplicate(do_nest([], inner), dim)
      row -> flat |> Enum.chunk_every(row) |> Enum.map(&do_nest(&1, inner))
    end
  end

  defimpl Inspect do
    def inspect(t, _opts) do
      dims = t.shape |> Tuple.to_list() |> Enum.map_join("", &"[#{&1}]")
      "#Nxvk.Tensor<#{t.dtype}#{dims} handle #{t.handle}>"
    end
  end
end
