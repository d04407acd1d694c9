import torch

class GraphModule(torch.nn.Module):

    def forward(self, in_0, in_1, w_0, w_1, i):
        tmp_0 = torch.nn.functional.layer_norm(in_0, (4,), w_0, None, 1e-06)
        tmp_1 = torch.nn.functional.scaled_dot_product_attention(tmp_0, in_1, in_1, attn_mask=None, dropout_p=0.0, scale=0.5, is_causal=False)
        tmp_2 = torch.nn.functional.softmax(tmp_1, dim=-1, dtype=torch.float32)
        tmp_3 = torch.nn.functional.dropout(tmp_2, 0.1, False, False)
        tmp_4 = torch.nn.functional.gelu(tmp_3, approximate="tanh")
        return (tmp_4,)
